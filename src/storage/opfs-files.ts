import type { OpfsReply, OpfsRequest } from './opfs-protocol';

/** The OPFS worker, or a port to it. */
export interface OpfsPort {
  postMessage(message: OpfsRequest, transfer: Transferable[]): void;
  addEventListener(type: 'message', listener: (event: MessageEvent<OpfsReply>) => void): void;
  addEventListener(type: 'error', listener: (event: Event) => void): void;
}

/** A worker that answers nothing for this long is gone (its document closed): the store fails rather than hang. */
const ANSWER_TIMEOUT_MS = 60_000;

type Ask = OpfsRequest extends infer R ? (R extends OpfsRequest ? Omit<R, 'id'> : never) : never;

/** Writes each job's bytes into its OPFS files through the OPFS worker (reads need no worker: see opfsBytes). */
export class OpfsWriter {
  private next = 1;
  private readonly pending = new Map<number, { resolve: (data?: Uint8Array) => void; reject: (error: Error) => void }>();

  constructor(
    private readonly port: OpfsPort,
    private readonly answerTimeoutMs = ANSWER_TIMEOUT_MS,
  ) {
    port.addEventListener('message', ({ data: reply }) => {
      const waiting = this.pending.get(reply.id);
      if (!waiting) return;
      this.pending.delete(reply.id);
      if (reply.ok) waiting.resolve(reply.data);
      else waiting.reject(Object.assign(new Error(reply.message), { name: reply.name }));
    });
    port.addEventListener('error', () => {
      for (const waiting of this.pending.values()) waiting.reject(new Error('the storage worker stopped'));
      this.pending.clear();
    });
  }

  /**
   * Writes (and flushes) `data` at `offset`. Its buffer moves to the worker, uncopied (a 4 MiB copy per
   * block was the service worker's largest cost of its own): the caller's view is detached after.
   * Resolves with the buffer moved back (a view of it), for the caller to reuse, when the worker returns it.
   */
  write(job: string, offset: number, data: Uint8Array): Promise<Uint8Array | undefined> {
    return this.ask({ op: 'write', job, offset, data }, [data.buffer]);
  }

  /** Flushes and closes the job's handles: its files are complete (to save them). */
  async release(job: string): Promise<void> {
    await this.ask({ op: 'release', job });
  }

  async remove(job: string): Promise<void> {
    await this.ask({ op: 'remove', job });
  }

  /** Deletes the job's chunk files of index below `before` (a one-file job keeps its file). */
  async drop(job: string, before: number): Promise<void> {
    await this.ask({ op: 'drop', job, before });
  }

  private ask(request: Ask, transfer: Transferable[] = []): Promise<Uint8Array | undefined> {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`the storage worker did not answer within ${this.answerTimeoutMs / 1000} s`));
      }, this.answerTimeoutMs);
      this.pending.set(id, {
        resolve: (data) => {
          clearTimeout(timer);
          resolve(data);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
      this.port.postMessage({ ...request, id }, transfer);
    });
  }
}
