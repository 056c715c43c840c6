import type { HttpFetch } from '../../engine';
import { MirrorProblem } from '../../engine/mirror-problem';
import { requester } from '../network/requester';

/**
 * A client of aria2's JSON-RPC interface (aria2c --enable-rpc), over HTTP POST or a WebSocket
 * (the endpoint's scheme decides). Every call carries the secret as `token:…`, as aria2 asks. Its
 * failures are data (`Aria2Failure`), put in words by the pages, so no English from here reaches a
 * user. Over a WebSocket, aria2's notifications (a download started, paused, stopped, completed,
 * failed) reach `onNotice`; over HTTP there are none, and the caller polls.
 *
 * HTTP calls go through the background's one door (requester.ts) and never follow a redirect: the
 * token would go wherever the endpoint pointed. A WebSocket has no redirects.
 */

/** How long one call may take before the endpoint counts as not answering. */
export const ARIA2_CALL_TIMEOUT_MS = 5_000;
/** The most of one HTTP answer read: 200 downloads' tellStatus is a few KiB each. */
export const ARIA2_MAX_ANSWER_BYTES = 4 * 1024 * 1024;

export type Aria2FailureKind =
  /** Nothing answered at that address (aria2 not running, a wrong port, a firewall). */
  | 'unreachable'
  /** aria2 answered that the secret is wrong. */
  | 'unauthorized'
  /** Something answered, but not as aria2's JSON-RPC does. */
  | 'not-aria2'
  /** aria2 refused the call; `detail` is its own message. */
  | 'refused';

export class Aria2Failure extends Error {
  constructor(
    readonly kind: Aria2FailureKind,
    readonly detail = '',
  ) {
    super(`aria2 ${kind}${detail ? `: ${detail}` : ''}`);
    this.name = 'Aria2Failure';
  }
}

export type Aria2Notice =
  | 'aria2.onDownloadStart'
  | 'aria2.onDownloadPause'
  | 'aria2.onDownloadStop'
  | 'aria2.onDownloadComplete'
  | 'aria2.onDownloadError'
  | 'aria2.onBtDownloadComplete';

/** What tellStatus reports of one download (the fields Stitch asks for; aria2 sends numbers as strings). */
export interface Aria2Status {
  gid: string;
  status: 'active' | 'waiting' | 'paused' | 'error' | 'complete' | 'removed';
  totalLength: string;
  completedLength: string;
  downloadSpeed: string;
  errorCode?: string;
  files?: { path: string; uris?: { uri: string }[] }[];
}

export const STATUS_KEYS = ['gid', 'status', 'totalLength', 'completedLength', 'downloadSpeed', 'errorCode', 'files'] as const;

export interface Aria2Endpoint {
  url: string;
  secret: string;
}

interface RpcAnswer {
  id?: string;
  method?: string;
  params?: { gid: string }[];
  result?: unknown;
  error?: { code: number; message: string };
}

/** One connection to one endpoint. `close()` ends the WebSocket, if any. */
export class Aria2Client {
  private socket: Promise<WebSocket> | undefined;
  private readonly pending = new Map<string, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  private nextId = 1;
  private readonly post: HttpFetch;

  constructor(
    private readonly endpoint: Aria2Endpoint,
    private readonly onNotice: (notice: Aria2Notice, gid: string) => void = () => {},
    private readonly onClose: () => void = () => {},
  ) {
    this.post = requester({ primaryUrl: endpoint.url, credentials: 'omit', credentialOrigins: [], redirects: 'refuse' });
  }

  get usesWebSocket(): boolean {
    return /^wss?:/i.test(this.endpoint.url);
  }

  async call<T>(method: string, ...params: unknown[]): Promise<T> {
    const id = String(this.nextId++);
    const body = JSON.stringify({ jsonrpc: '2.0', id, method, params: [`token:${this.endpoint.secret}`, ...params] });
    const answer = this.usesWebSocket ? await this.overSocket(id, body) : await this.overHttp(body);
    return answer as T;
  }

  close(): void {
    const socket = this.socket;
    this.socket = undefined;
    void socket?.then((s) => s.close()).catch(() => {});
  }

  private async overHttp(body: string): Promise<unknown> {
    // Aborted once the answer is read too: the door holds a connection of the endpoint until then.
    const done = new AbortController();
    const timer = setTimeout(() => done.abort(), ARIA2_CALL_TIMEOUT_MS);
    try {
      let response;
      try {
        response = await this.post(this.endpoint.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
          signal: done.signal,
        });
      } catch (error) {
        // The door refused: a redirect (never followed), or an address it does not send to.
        if (error instanceof MirrorProblem) throw new Aria2Failure('not-aria2', error.message);
        throw new Aria2Failure('unreachable');
      }
      let answer: RpcAnswer;
      try {
        answer = JSON.parse(await readText(response.body, ARIA2_MAX_ANSWER_BYTES)) as RpcAnswer;
      } catch {
        throw new Aria2Failure(done.signal.aborted ? 'unreachable' : 'not-aria2');
      }
      return settle(answer);
    } finally {
      clearTimeout(timer);
      done.abort();
    }
  }

  private async overSocket(id: string, body: string): Promise<unknown> {
    const socket = await this.open();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Aria2Failure('unreachable'));
      }, ARIA2_CALL_TIMEOUT_MS);
      this.pending.set(id, {
        resolve: (value) => (clearTimeout(timer), resolve(value)),
        reject: (error) => (clearTimeout(timer), reject(error)),
      });
      socket.send(body);
    });
  }

  private open(): Promise<WebSocket> {
    this.socket ??= new Promise<WebSocket>((resolve, reject) => {
      let socket: WebSocket;
      try {
        socket = new WebSocket(this.endpoint.url);
      } catch {
        reject(new Aria2Failure('unreachable'));
        return;
      }
      const timer = setTimeout(() => (socket.close(), reject(new Aria2Failure('unreachable'))), ARIA2_CALL_TIMEOUT_MS);
      socket.onopen = () => (clearTimeout(timer), resolve(socket));
      socket.onerror = () => (clearTimeout(timer), reject(new Aria2Failure('unreachable')));
      socket.onclose = () => {
        this.socket = undefined;
        for (const { reject: fail } of this.pending.values()) fail(new Aria2Failure('unreachable'));
        this.pending.clear();
        this.onClose();
      };
      socket.onmessage = (event: MessageEvent) => this.receive(event.data);
    });
    this.socket.catch(() => (this.socket = undefined));
    return this.socket;
  }

  private receive(data: unknown): void {
    let answer: RpcAnswer;
    try {
      answer = JSON.parse(String(data)) as RpcAnswer;
    } catch {
      return;
    }
    if (typeof answer !== 'object' || answer === null) return;
    if (answer.method && answer.id === undefined) {
      const gid = answer.params?.[0]?.gid;
      if (gid) this.onNotice(answer.method as Aria2Notice, gid);
      return;
    }
    const waiting = answer.id === undefined ? undefined : this.pending.get(answer.id);
    if (!waiting) return;
    this.pending.delete(answer.id!);
    try {
      waiting.resolve(settle(answer));
    } catch (error) {
      waiting.reject(error as Error);
    }
  }
}

/** The body as text, refused past `max` bytes. */
async function readText(body: ReadableStream<Uint8Array> | null, max: number): Promise<string> {
  const chunks: Uint8Array[] = [];
  let length = 0;
  const reader = body?.getReader();
  try {
    for (;;) {
      const next = await reader?.read();
      if (!next || next.done) break;
      length += next.value.length;
      if (length > max) throw new Error(`the answer is over ${max} bytes`);
      chunks.push(next.value);
    }
  } finally {
    await reader?.cancel().catch(() => {});
  }
  const bytes = new Uint8Array(length);
  chunks.reduce((at, chunk) => (bytes.set(chunk, at), at + chunk.length), 0);
  return new TextDecoder().decode(bytes);
}

function settle(answer: RpcAnswer): unknown {
  if (typeof answer !== 'object' || answer === null) throw new Aria2Failure('not-aria2');
  if (answer.error) {
    if (/unauthorized/i.test(String(answer.error.message))) throw new Aria2Failure('unauthorized');
    throw new Aria2Failure('refused', answer.error.message);
  }
  if (!('result' in answer)) throw new Aria2Failure('not-aria2');
  return answer.result;
}
