import type { HexDigest } from './integrity/expected';
import type { FileChange } from './notice';

/** What the job knows about the file on the server; learned from the first response. */
export interface RemoteFile {
  /** Total size in bytes, when the server said it (identity encoding only). */
  size?: number;
  /** Strong ETag, exactly as sent (used for If-Range). */
  etag?: string;
  lastModified?: string;
  /** Whether range requests are known to work (a 206, or Accept-Ranges: bytes). */
  acceptRanges: boolean;
  /** Name from Content-Disposition, else from the final URL; sanitized. */
  filename: string;
  contentType?: string;
  /** Whole-file digests the server announced. */
  digests?: HexDigest[];
}

/** Why `next` shows the file is not the one `known` describes, or undefined if it may be. */
export function fileChange(
  known: Pick<RemoteFile, 'size' | 'etag' | 'lastModified'>,
  next: { size?: number; etag?: string; lastModified?: string },
): FileChange | undefined {
  if (known.etag && next.etag && known.etag !== next.etag) return { what: 'etag', from: known.etag, to: next.etag };
  if (known.lastModified && next.lastModified && known.lastModified !== next.lastModified) {
    return { what: 'last-modified', from: known.lastModified, to: next.lastModified };
  }
  if (known.size !== undefined && next.size !== undefined && known.size !== next.size) {
    return { what: 'size', from: known.size, to: next.size };
  }
  return undefined;
}

/** The validator to send in If-Range: a strong ETag, else Last-Modified. */
export function ifRangeValidator(file: RemoteFile): string | undefined {
  return file.etag ?? file.lastModified;
}
