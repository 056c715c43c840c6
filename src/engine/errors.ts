/** Why a download stopped, in a form both code and people can read. */
export type DownloadErrorCode =
  | 'network' // nothing could be received: refused, DNS, TLS, timeouts before the first byte
  | 'http-status' // the server answered with an error status
  | 'changed' // the file changed on the server more often than we are willing to restart
  | 'no-ranges' // the server cannot resume and the file is too large to restart
  | 'bad-range' // the server answered with a Content-Range other than the one asked for
  | 'bad-length' // the server sent more bytes than it announced
  | 'encoding' // a compressed partial response that cannot be spliced
  | 'protocol' // the server's answer broke HTTP's rules or the client's limits (RefusedResponse)
  | 'storage-full' // the disk or quota is full: the job pauses, keeping what it stored
  | 'storage' // the store failed for a reason other than being full
  | 'verify'; // the finished file did not match its expected size or digest

export class DownloadError extends Error {
  override readonly name = 'DownloadError';
  constructor(
    readonly code: DownloadErrorCode,
    message: string,
    /** Whether trying the same request again later may succeed. */
    readonly retryable = false,
    /** Delay the server asked for (Retry-After), in ms. */
    readonly retryAfterMs?: number,
    /** The HTTP status that caused it, when a server answered. */
    readonly status?: number,
  ) {
    super(message);
  }
}
