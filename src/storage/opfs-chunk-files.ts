import { CHUNK_BYTES, chunkIndices, chunkPieces, legacyFile, removeIfThere, type OpfsDirectory } from './opfs-chunks';
import { chunkFileName, jobFileName } from './opfs-protocol';

/** What the worker uses of a sync access handle. */
export type SyncHandle = Pick<FileSystemSyncAccessHandle, 'write' | 'flush' | 'close'>;
type FileWithHandle = FileSystemFileHandle & { createSyncAccessHandle(): Promise<SyncHandle> };

/**
 * Handles kept open per job: the engine writes a window of blocks at once, which spans a few
 * chunks; older ones are closed (each write is flushed already, so closing costs nothing more).
 */
const MAX_OPEN_PER_JOB = 4;
/** The key of a one-file job's handle among its chunks'. */
const ONE_FILE = -1;

/**
 * The OPFS worker's files: each job's bytes in chunk files (opfs-chunks.ts), written through sync
 * access handles, or a job an older version began in its one file, which it keeps until removed.
 * The worker calls it one request of a job at a time.
 */
export class ChunkFiles {
  /** Each job's open handles, least recently used first. */
  private readonly handles = new Map<string, Map<number, Promise<SyncHandle>>>();
  /** Whether each job is a one-file job, found once. */
  private readonly oneFile = new Map<string, Promise<boolean>>();

  constructor(
    private readonly dir: () => Promise<OpfsDirectory>,
    private readonly chunkBytes = CHUNK_BYTES,
    private readonly maxOpen = MAX_OPEN_PER_JOB,
  ) {}

  /** Writes and flushes `data` at `offset`; a piece that straddles chunks is split. */
  async write(job: string, offset: number, data: Uint8Array): Promise<void> {
    const pieces = (await this.isOneFile(job))
      ? [{ index: ONE_FILE, at: offset, start: 0, end: data.byteLength }]
      : chunkPieces(offset, data.byteLength, this.chunkBytes);
    for (const piece of pieces) {
      const handle = await this.handle(job, piece.index);
      const part = data.subarray(piece.start, piece.end);
      const written = handle.write(part, { at: piece.at });
      if (written !== part.byteLength)
        throw new DOMException(`only ${written} of ${part.byteLength} bytes were written`, 'QuotaExceededError');
      handle.flush();
    }
  }

  /** Flushes and closes the job's handles. */
  async release(job: string): Promise<void> {
    const open = this.handles.get(job);
    this.handles.delete(job);
    for (const index of open?.keys() ?? []) await close(open!.get(index)!);
  }

  /** Deletes every file of the job. */
  async remove(job: string): Promise<void> {
    await this.release(job);
    this.oneFile.delete(job);
    const dir = await this.dir();
    await removeIfThere(dir, jobFileName(job));
    for (const index of await chunkIndices(dir, job)) await removeIfThere(dir, chunkFileName(job, index));
  }

  /** Deletes the job's chunk files of index below `before`; a one-file job keeps its file. */
  async drop(job: string, before: number): Promise<void> {
    if (await this.isOneFile(job)) return;
    const open = this.handles.get(job);
    for (const [index, handle] of open ?? []) {
      if (index >= before) continue;
      open!.delete(index);
      await close(handle);
    }
    const dir = await this.dir();
    for (const index of await chunkIndices(dir, job)) if (index < before) await removeIfThere(dir, chunkFileName(job, index));
  }

  private isOneFile(job: string): Promise<boolean> {
    let known = this.oneFile.get(job);
    if (!known) {
      known = this.dir().then(async (dir) => (await legacyFile(dir, job)) !== undefined);
      this.oneFile.set(job, known);
      known.catch(() => this.oneFile.delete(job));
    }
    return known;
  }

  private async handle(job: string, index: number): Promise<SyncHandle> {
    let open = this.handles.get(job);
    if (!open) this.handles.set(job, (open = new Map<number, Promise<SyncHandle>>()));
    let handle = open.get(index);
    if (handle) {
      open.delete(index); // most recently used last
    } else {
      const name = index === ONE_FILE ? jobFileName(job) : chunkFileName(job, index);
      handle = this.dir().then(async (dir) =>
        ((await dir.getFileHandle(name, { create: true })) as FileWithHandle).createSyncAccessHandle(),
      );
      handle.catch(() => {
        if (open.get(index) === handle) open.delete(index);
      });
    }
    open.set(index, handle);
    for (const [oldest, old] of open) {
      if (open.size <= this.maxOpen) break;
      open.delete(oldest);
      await close(old);
    }
    return handle;
  }
}

async function close(handle: Promise<SyncHandle>): Promise<void> {
  const open = await handle.catch(() => undefined);
  open?.flush();
  open?.close();
}
