/// <reference lib="webworker" />
import { ChunkFiles } from './opfs-chunk-files';
import { opfsRoot } from './opfs-chunks';
import type { OpfsReply, OpfsRequest } from './opfs-protocol';

/**
 * The OPFS worker: writes each job's files through sync access handles, the fastest way to a
 * file a browser offers (Firefox 300–1000 MB/s, Chromium 250–580, against 80–230 for IndexedDB,
 * measured 2026-11-23). Reads need no handle (opfsBytes). Every write is flushed before it is
 * answered: a write the store reported must survive the browser dying.
 */
const scope = self as unknown as DedicatedWorkerGlobalScope;
const files = new ChunkFiles(opfsRoot);

async function answer(request: OpfsRequest): Promise<void> {
  switch (request.op) {
    case 'write':
      return files.write(request.job, request.offset, request.data);
    case 'release':
      return files.release(request.job);
    case 'remove':
      return files.remove(request.job);
    case 'drop':
      return files.drop(request.job, request.before);
  }
}

/** Each job's requests in the order they came: a release or remove never closes a handle under a write. */
const queues = new Map<string, Promise<void>>();

/**
 * Firefox's background page talks to the worker directly; Chrome's service worker through a port
 * the offscreen document hands over (`{ connect: port }`): a restarted service worker gets a new one.
 */
scope.onmessage = (event: MessageEvent<OpfsRequest | { connect: MessagePort }>) => {
  const { data } = event;
  if ('connect' in data) {
    data.connect.onmessage = (message: MessageEvent<OpfsRequest>) => serve(message.data, data.connect);
    return;
  }
  serve(data, scope);
};

/** Where replies go: the worker's own scope, or the port of Chrome's service worker. */
interface ReplyTo {
  postMessage(message: OpfsReply, transfer: Transferable[]): void;
}

function serve(request: OpfsRequest, to: ReplyTo): void {
  const queued = (queues.get(request.job) ?? Promise.resolve()).then(() => reply(request, to));
  queues.set(request.job, queued);
  void queued.then(() => {
    if (queues.get(request.job) === queued) queues.delete(request.job);
  });
}

async function reply(request: OpfsRequest, to: ReplyTo): Promise<void> {
  let message: OpfsReply;
  let transfer: Transferable[] = [];
  try {
    await answer(request);
    message = { id: request.id, ok: true };
    if (request.op === 'write') {
      // The written block's buffer goes back: the sender fills it again instead of mapping fresh memory per block.
      message.data = request.data;
      transfer = [request.data.buffer];
    }
  } catch (error) {
    const { name = 'Error', message: text = String(error) } = error as { name?: string; message?: string };
    message = { id: request.id, ok: false, name, message: text };
  }
  to.postMessage(message, transfer);
}
