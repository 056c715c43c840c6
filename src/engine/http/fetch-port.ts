/**
 * What the engine asks of `fetch`: a platform's fetch fits it (the browser's as it is), and so does
 * a client that builds no Request, Response or Headers. The CLI's client is one: in Node those
 * globals load undici, about 13 MiB of memory the CLI would otherwise carry for nothing.
 */
export interface HttpRequest {
  /** POST only for calls with a body (aria2's RPC); files are read with GET and HEAD. */
  method?: 'GET' | 'HEAD' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
  redirect?: RequestRedirect;
  credentials?: RequestCredentials;
  referrer?: string;
  cache?: RequestCache;
  /**
   * 'refuse': the port must not connect to a loopback, private, link-local or shared address
   * (address-class.ts), judged on the address it actually connects to, after name resolution, so
   * a public-looking name that resolves (or rebinds) there is refused too; it fails with
   * RefusedResponse. Set by the requester (request-trust.ts) for every request a download's own
   * address does not make local. A browser's fetch cannot see the address and ignores it (its
   * local-network rules judge names instead: docs/security.md).
   */
  localNetwork?: 'allow' | 'refuse';
}

export interface HttpResponse {
  readonly status: number;
  readonly statusText: string;
  readonly ok: boolean;
  /** Where the response came from, after redirects. */
  readonly url: string;
  /** 'opaqueredirect' when a browser hides a redirect asked for with `redirect: 'manual'`. */
  readonly type?: string;
  readonly headers: { get(name: string): string | null };
  readonly body: ReadableStream<Uint8Array> | null;
}

export type HttpFetch = (url: string, init?: HttpRequest) => Promise<HttpResponse>;

/**
 * A fetch port refused the server's answer by rule: headers over their size limit, more content
 * codings than it undoes, a broken status line or framing. The same server would give the same
 * answer again, so its source is given up at once instead of retried. (A browser's fetch reports
 * such answers as plain network errors; the CLI's client tells them apart.)
 */
export class RefusedResponse extends Error {
  override readonly name = 'RefusedResponse';
}
