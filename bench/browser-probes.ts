/**
 * Measurements that run inside a browser context (an extension page, Chrome's service worker, or
 * a loopback page). Each function is sent to the browser as source text: it must be
 * self-contained (no imports, no outer variables) and return plain JSON.
 */

export interface IdbVariant {
  /** Bytes in one record. */
  record: number;
  /** Write transactions in flight. */
  inflight: number;
  kind: 'blob' | 'buffer';
  durability: 'relaxed' | 'default';
  /** Object stores the records are spread over (write transactions on one store commit one at a time); default 1. */
  stores?: number;
}

/** Writes `total` bytes into a fresh database as `variant` records; MB/s (10^6 bytes). */
export async function idbWriteMBps(arg: { total: number; variant: IdbVariant }): Promise<number> {
  const { total, variant } = arg;
  const name = `stitch-bench-${Math.random()}`;
  const db = await new Promise<IDBDatabase>((resolve, reject) => {
    const open = indexedDB.open(name, 1);
    open.onupgradeneeded = () => {
      for (let i = 0; i < (variant.stores ?? 1); i++) open.result.createObjectStore(`blocks${i}`);
    };
    open.onsuccess = () => resolve(open.result);
    open.onerror = () => reject(open.error ?? new Error('indexedDB.open failed'));
  });
  const source = new Uint8Array(variant.record);
  for (let i = 0; i < source.length; i += 65536) crypto.getRandomValues(source.subarray(i, i + 65536));
  let next = 0;
  const writer = async (): Promise<void> => {
    while (next < total) {
      const offset = next;
      next += variant.record;
      // A fresh value per record, as the engine hands over a new block each time.
      const value = variant.kind === 'blob' ? new Blob([source]) : source.slice().buffer;
      const storeName = `blocks${(offset / variant.record) % (variant.stores ?? 1)}`;
      const tx = db.transaction(storeName, 'readwrite', { durability: variant.durability });
      tx.objectStore(storeName).put(value, offset);
      await new Promise<void>((resolve, reject) => {
        tx.oncomplete = () => resolve();
        tx.onabort = () => reject(tx.error ?? new Error('the transaction was aborted'));
      });
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: variant.inflight }, writer));
  const seconds = (performance.now() - started) / 1000;
  db.close();
  await new Promise((resolve) => {
    const del = indexedDB.deleteDatabase(name);
    del.onsuccess = del.onerror = del.onblocked = resolve;
  });
  return total / 1e6 / seconds;
}

/**
 * SHA-256 MB/s over `total` bytes in 4 MiB updates with hash-wasm (its UMD build, evaluated
 * before this as the global `hashwasm`), and crypto.subtle's one-shot digest for reference.
 */
export async function sha256MBps(arg: { total: number }): Promise<{ wasm: number; subtleOneShot: number }> {
  const chunk = new Uint8Array(4 * 1024 * 1024);
  for (let i = 0; i < chunk.length; i += 65536) crypto.getRandomValues(chunk.subarray(i, i + 65536));
  const hashwasm = (globalThis as unknown as { hashwasm: { createSHA256(): Promise<{ update(b: Uint8Array): void; digest(): string }> } })
    .hashwasm;
  const hasher = await hashwasm.createSHA256();
  hasher.update(chunk); // compile and warm up
  let started = performance.now();
  for (let done = 0; done < arg.total; done += chunk.length) hasher.update(chunk);
  hasher.digest();
  const wasm = arg.total / 1e6 / ((performance.now() - started) / 1000);
  const whole = new Uint8Array(Math.min(arg.total, 256 * 1024 * 1024));
  started = performance.now();
  await crypto.subtle.digest('SHA-256', whole);
  const subtleOneShot = whole.length / 1e6 / ((performance.now() - started) / 1000);
  return { wasm, subtleOneShot };
}

/** OPFS from the calling context with createWritable (Firefox's background page could do this). */
export async function opfsWritableMBps(arg: { total: number; record: number }): Promise<number> {
  const root = await navigator.storage.getDirectory();
  const handle = await root.getFileHandle('stitch-bench-writable', { create: true });
  const source = new Uint8Array(arg.record);
  for (let i = 0; i < source.length; i += 65536) crypto.getRandomValues(source.subarray(i, i + 65536));
  const started = performance.now();
  const writable = await handle.createWritable();
  for (let offset = 0; offset < arg.total; offset += arg.record) await writable.write({ type: 'write', position: offset, data: source });
  await writable.close();
  const seconds = (performance.now() - started) / 1000;
  await root.removeEntry('stitch-bench-writable');
  return arg.total / 1e6 / seconds;
}

/** Source of a dedicated worker that writes with createSyncAccessHandle and posts MB/s back. */
export const OPFS_SYNC_WORKER = `
onmessage = async (event) => {
  const { total, record } = event.data;
  try {
    const root = await navigator.storage.getDirectory();
    const file = await root.getFileHandle('stitch-bench-sync', { create: true });
    const source = new Uint8Array(record);
    for (let i = 0; i < source.length; i += 65536) crypto.getRandomValues(source.subarray(i, i + 65536));
    const started = performance.now();
    const access = await file.createSyncAccessHandle();
    for (let offset = 0; offset < total; offset += record) access.write(source, { at: offset });
    access.flush();
    access.close();
    const seconds = (performance.now() - started) / 1000;
    await root.removeEntry('stitch-bench-sync');
    postMessage({ mbps: total / 1e6 / seconds });
  } catch (error) {
    postMessage({ error: String(error) });
  }
};
`;

/** Runs OPFS_SYNC_WORKER (served at `workerUrl`, same origin as the page) and returns its MB/s. */
export async function opfsSyncMBps(arg: { total: number; record: number; workerUrl: string }): Promise<number> {
  const worker = new Worker(arg.workerUrl);
  const reply = await new Promise<{ mbps?: number; error?: string }>((resolve) => {
    worker.onmessage = (event: MessageEvent<{ mbps?: number; error?: string }>) => resolve(event.data);
    worker.onerror = (event) => resolve({ error: event.message });
    worker.postMessage({ total: arg.total, record: arg.record });
  });
  worker.terminate();
  if (reply.error !== undefined || reply.mbps === undefined) throw new Error(reply.error ?? 'no answer');
  return reply.mbps;
}

export type PipelineStage = 'response blob' | 'read' | 'copy' | 'blob' | 'idb' | 'idb, four stores';

/**
 * The download path without the engine, stage by stage, to find which one bounds it: `response blob`
 * takes each range request's body with `response.blob()`, so its bytes never enter the script (in
 * Chromium the network's data pipe goes straight to the browser's blob storage); `read`
 * fetches `size` bytes of `url` over `connections` range requests and drops them; `copy` also
 * copies them into 4 MiB buffers (the engine's block buffers); `blob` also makes a Blob of each
 * full buffer; `idb` also stores those Blobs as IdbStore does (8 relaxed transactions in flight,
 * one object store), `idb, four stores` spread over four stores (transactions on different
 * stores commit at once). MB/s (10^6 bytes).
 */
export async function fetchPipelineMBps(arg: { url: string; size: number; connections: number; stage: PipelineStage }): Promise<number> {
  const { url, size, connections, stage } = arg;
  const record = 4 * 1024 * 1024;
  const shards = stage === 'idb, four stores' ? 4 : 1;
  let db: IDBDatabase | undefined;
  const name = `stitch-pipeline-${Math.random()}`;
  if (stage.startsWith('idb')) {
    db = await new Promise<IDBDatabase>((resolve, reject) => {
      const open = indexedDB.open(name, 1);
      open.onupgradeneeded = () => {
        for (let i = 0; i < shards; i++) open.result.createObjectStore(`blocks${i}`);
      };
      open.onsuccess = () => resolve(open.result);
      open.onerror = () => reject(open.error ?? new Error('indexedDB.open failed'));
    });
  }
  const inFlight = new Set<Promise<void>>();
  const store = async (offset: number, blob: Blob): Promise<void> => {
    while (inFlight.size >= 8) await Promise.race(inFlight);
    const storeName = `blocks${(offset / record) % shards}`;
    const tx = db!.transaction(storeName, 'readwrite', { durability: 'relaxed' });
    tx.objectStore(storeName).put(blob, offset);
    const done = new Promise<void>((resolve, reject) => {
      tx.oncomplete = () => resolve();
      tx.onabort = () => reject(tx.error ?? new Error('the transaction was aborted'));
    });
    inFlight.add(done);
    void done.finally(() => inFlight.delete(done));
  };
  const slice = Math.ceil(size / connections / record) * record;
  const one = async (start: number, end: number): Promise<void> => {
    const response = await fetch(url, { headers: { Range: `bytes=${start}-${end - 1}` }, cache: 'no-store' });
    if (stage === 'response blob') {
      const body = await response.blob();
      if (body.size !== end - start) throw new Error(`${body.size} bytes, not ${end - start}`);
      return;
    }
    const reader = response.body!.getReader();
    let buffer = new Uint8Array(record);
    let filled = 0;
    let bufferStart = start;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (stage === 'read') continue;
      for (let at = 0; at < value.length;) {
        const take = Math.min(record - filled, value.length - at);
        buffer.set(value.subarray(at, at + take), filled);
        filled += take;
        at += take;
        if (filled < record) continue;
        if (stage !== 'copy') {
          const blob = new Blob([buffer]);
          if (stage !== 'blob') await store(bufferStart, blob);
        }
        bufferStart += filled;
        filled = 0;
        buffer = new Uint8Array(record);
      }
    }
  };
  const started = performance.now();
  const ranges = Array.from({ length: connections }, (_, i) => [i * slice, Math.min(size, (i + 1) * slice)] as const).filter(
    ([s, e]) => s < e,
  );
  await Promise.all(ranges.map(([s, e]) => one(s, e)));
  await Promise.all(inFlight);
  const seconds = (performance.now() - started) / 1000;
  if (db) {
    db.close();
    await new Promise((resolve) => {
      const del = indexedDB.deleteDatabase(name);
      del.onsuccess = del.onerror = del.onblocked = resolve;
    });
  }
  return size / 1e6 / seconds;
}
