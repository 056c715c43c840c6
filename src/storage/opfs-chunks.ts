import { chunkFileName, chunkIndexOf, jobFileName } from './opfs-protocol';

/**
 * Each job's bytes are kept in chunk files of this size, `<job>.<index>.bytes`, because the
 * origin private file system cannot free the start of a file (no hole punching; truncate cuts
 * the end only): a streamed save gives the store's space back behind the browser's download one
 * whole chunk at a time (OpfsStore.releaseBefore), so the store holds at most about one chunk
 * behind the download's position. 64 MiB keeps that overhead small beside the large files Stitch
 * takes (20 MB and more), a 16 GiB file in 256 files, and is a multiple of the 4 MiB block, so a
 * block rarely straddles two chunks (one that does is split).
 */
export const CHUNK_BYTES = 64 * 1024 * 1024;

/** What the store and the worker use of an OPFS directory (the DOM types lack its async iteration here). */
export interface OpfsDirectory {
  getFileHandle(name: string, options?: { create?: boolean }): Promise<FileSystemFileHandle>;
  removeEntry(name: string): Promise<void>;
  keys(): AsyncIterable<string>;
}

/** Part [start, end) of a write's data goes to chunk `index`, at `at` within it. */
export interface ChunkPiece {
  index: number;
  at: number;
  start: number;
  end: number;
}

/** How `length` bytes written at `offset` fall into chunks. */
export function chunkPieces(offset: number, length: number, chunkBytes = CHUNK_BYTES): ChunkPiece[] {
  const pieces: ChunkPiece[] = [];
  for (let pos = offset; pos < offset + length;) {
    const index = Math.floor(pos / chunkBytes);
    const end = Math.min(offset + length, (index + 1) * chunkBytes);
    pieces.push({ index, at: pos - index * chunkBytes, start: pos - offset, end: end - offset });
    pos = end;
  }
  return pieces;
}

/** The origin's private directory, asked once. */
let root: Promise<OpfsDirectory> | undefined;
export function opfsRoot(): Promise<OpfsDirectory> {
  root ??= navigator.storage.getDirectory() as unknown as Promise<OpfsDirectory>;
  root.catch(() => (root = undefined));
  return root;
}

const notFound = (error: unknown) => (error as { name?: string } | null)?.name === 'NotFoundError';

/** The one file of a job an older version began, or undefined for a job in chunk files. */
export async function legacyFile(dir: OpfsDirectory, job: string): Promise<FileSystemFileHandle | undefined> {
  try {
    return await dir.getFileHandle(jobFileName(job));
  } catch (error) {
    if (notFound(error)) return undefined;
    throw error;
  }
}

/**
 * The job's bytes [start, end) as they are on disk now: one Blob made of slices of its files'
 * snapshots (no byte is copied or read yet). Any page of the extension may read while the worker
 * writes: Firefox allows it (checked 2026-11-23). Throws when a file holds less than asked: the
 * caller asked for bytes its ranges say are stored, so that is a store that lost them.
 */
export async function opfsBytes(dir: OpfsDirectory, job: string, start: number, end: number, chunkBytes = CHUNK_BYTES): Promise<Blob> {
  if (end <= start) return new Blob([]);
  const legacy = await legacyFile(dir, job);
  const parts: Blob[] = [];
  if (legacy) parts.push((await legacy.getFile()).slice(start, end));
  else {
    for (const piece of chunkPieces(start, end - start, chunkBytes)) {
      const file = await dir.getFileHandle(chunkFileName(job, piece.index)).catch((error: unknown) => {
        if (notFound(error)) throw new Error(`Job ${job}: byte ${start + piece.start} is not in its files`);
        throw error;
      });
      parts.push((await file.getFile()).slice(piece.at, piece.at + piece.end - piece.start));
    }
  }
  const blob = parts.length === 1 ? parts[0]! : new Blob(parts);
  if (blob.size !== end - start) throw new Error(`Job ${job}: byte ${start + blob.size} is not in its files`);
  return blob;
}

/** The indices of the job's chunk files, found in the directory. */
export async function chunkIndices(dir: OpfsDirectory, job: string): Promise<number[]> {
  const found: number[] = [];
  for await (const name of dir.keys()) {
    const index = chunkIndexOf(job, name);
    if (index !== undefined) found.push(index);
  }
  return found.sort((a, b) => a - b);
}

/** Deletes `name` if it is there. */
export async function removeIfThere(dir: OpfsDirectory, name: string): Promise<void> {
  await dir.removeEntry(name).catch((error: unknown) => {
    if (!notFound(error)) throw error;
  });
}
