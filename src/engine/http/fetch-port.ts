/**
 * What the engine asks of `fetch`: a platform's fetch fits it (the browser's as it is), and so does
 * a client that builds no Request, Response or Headers. The CLI's client is one: in Node those
 * globals load undici, about 13 MiB of memory the CLI would otherwise carry for nothing.
 */
export interface HttpRequest {
  method?: 'GET' | 'HEAD';
  headers?: Record<string, string>;
  signal?: AbortSignal;
  redirect?: RequestRedirect;
  credentials?: RequestCredentials;
  referrer?: string;
  cache?: RequestCache;
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
