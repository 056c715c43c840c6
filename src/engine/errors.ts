/** Why a download stopped, in a form both code and people can read. */
export type DownloadErrorCode =
  | 'network' // nothing could be received: refused, DNS, TLS, timeouts before the first byte
  | 'http-status' // the server answered with an error status
  | 'redirect' // a redirect Stitch does not follow: too many, not a URL, or to an address it may not use
  | 'changed' // the file changed on the server more often than we are willing to restart
  | 'no-ranges' // the server cannot resume and the file is too large to restart
  | 'bad-range' // the server answered with a Content-Range other than the one asked for
  | 'bad-length' // the server sent more bytes than it announced
  | 'encoding' // a compressed partial response that cannot be spliced
  | 'protocol' // the server's answer broke HTTP's rules or the client's limits (RefusedResponse)
  | 'storage-full' // the disk or quota is full: the job pauses, keeping what it stored
  | 'storage' // the store failed for a reason other than being full
  | 'verify'; // the finished file did not match its expected size or digest

/**
 * How a connection failed before any answer, when the platform says: Node names the cause
 * (ECONNREFUSED…); a browser's fetch says only that it failed ('unreached'). 'silent': it
 * connected, then nothing came in time.
 */
export type NetworkFailure = 'refused' | 'reset' | 'closed' | 'dns' | 'timeout' | 'unreachable' | 'unreached' | 'silent';

/**
 * What went wrong, as data: the pages put it in the user's language (the engine's message is
 * English, for the CLI and logs).
 */
export interface FailureFacts {
  code: DownloadErrorCode;
  /** The HTTP status, when a server answered. */
  status?: number;
  /** How the connection failed, for `network`. */
  network?: NetworkFailure;
  /** Stitch gave up after this many attempts in a row that received nothing. */
  attempts?: number;
}

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
    /** The rest of what is known of it (how a connection failed, attempts given up after). */
    readonly more: Pick<FailureFacts, 'network' | 'attempts'> = {},
  ) {
    super(message);
  }

  get facts(): FailureFacts {
    return { code: this.code, ...(this.status === undefined ? {} : { status: this.status }), ...this.more };
  }
}
