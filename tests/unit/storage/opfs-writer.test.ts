import { jobFileName } from '../../../src/storage/opfs-protocol';
import { describe, expect, it, vi } from 'vitest';
import { isQuotaError } from '../../../src/engine/store';
import { OpfsWriter } from '../../../src/storage/opfs-files';
import type { OpfsReply, OpfsRequest } from '../../../src/storage/opfs-protocol';
import { openOpfsStore } from '../../../src/storage/opfs-store';
import { IDBFactory } from 'fake-indexeddb';
import { useFakeIdbGlobals } from '../../support/fake-idb-globals';

useFakeIdbGlobals();

/** The writer's side of a real MessageChannel; `answer` plays the worker on the other side. */
function connected(
  answer: (request: OpfsRequest) => OpfsReply | undefined,
  answerTimeoutMs?: number,
): {
  writer: OpfsWriter;
  seen: OpfsRequest[];
  close: () => void;
} {
  const channel = new MessageChannel();
  const seen: OpfsRequest[] = [];
  channel.port2.onmessage = (event: MessageEvent<OpfsRequest>) => {
    seen.push(event.data);
    const reply = answer(event.data);
    if (reply) channel.port2.postMessage(reply);
  };
  channel.port1.start();
  return {
    writer: new OpfsWriter(channel.port1, answerTimeoutMs),
    seen,
    close: () => {
      channel.port1.close();
      channel.port2.close();
    },
  };
}

describe('OpfsWriter', () => {
  it('moves the bytes to the worker uncopied, at their offset: a view of part of a buffer arrives as that part', async () => {
    const { writer, seen, close } = connected((r) => ({ id: r.id, ok: true }));
    const block = new Uint8Array([1, 2, 3, 4, 5, 6]);
    await writer.write('job-1', 4096, block.subarray(2, 5));
    close();
    expect(block.byteLength).toBe(0); // transferred, not copied
    expect(seen).toHaveLength(1);
    const sent = seen[0] as Extract<OpfsRequest, { op: 'write' }>;
    expect(sent).toMatchObject({ op: 'write', job: 'job-1', offset: 4096 });
    expect([...sent.data]).toEqual([3, 4, 5]);
  });

  it('resolves a write with the buffer the worker moved back, for the next block', async () => {
    const channel = new MessageChannel();
    channel.port2.onmessage = (event: MessageEvent<OpfsRequest>) => {
      const request = event.data as Extract<OpfsRequest, { op: 'write' }>;
      channel.port2.postMessage({ id: request.id, ok: true, data: request.data } satisfies OpfsReply, [request.data.buffer]);
    };
    channel.port1.start();
    const writer = new OpfsWriter(channel.port1);
    const block = new Uint8Array([1, 2, 3, 4, 5, 6]);
    const returned = await writer.write('job-1', 0, block.subarray(0, 4));
    channel.port1.close();
    channel.port2.close();
    expect(block.byteLength).toBe(0);
    expect(returned?.buffer.byteLength).toBe(6);
    expect([...new Uint8Array(returned!.buffer)]).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it("keeps a worker's QuotaExceededError recognisable: the job pauses with 'storage full', not a crash", async () => {
    const { writer, close } = connected((r) => ({ id: r.id, ok: false, name: 'QuotaExceededError', message: 'the disk is full' }));
    const error: unknown = await writer.write('job-1', 0, new Uint8Array(8)).catch((e: unknown) => e);
    close();
    expect(isQuotaError(error)).toBe(true);
    expect((error as Error).message).toBe('the disk is full');
  });

  it('answers each request by its id, whatever order the worker replies in', async () => {
    const held: OpfsRequest[] = [];
    const channel = connected((r) => {
      held.push(r);
      return undefined;
    });
    const first = channel.writer.write('a', 0, new Uint8Array(1));
    const second = channel.writer.remove('b');
    await vi.waitFor(() => expect(held).toHaveLength(2));
    // Only the second is answered: the first stays pending.
    const port = (channel.writer as unknown as { port: MessagePort }).port;
    port.dispatchEvent(new MessageEvent('message', { data: { id: held[1]!.id, ok: true } satisfies OpfsReply }));
    await expect(second).resolves.toBeUndefined();
    let firstSettled = false;
    void first.then(() => (firstSettled = true));
    await new Promise((r) => setTimeout(r, 20));
    expect(firstSettled).toBe(false);
    port.dispatchEvent(new MessageEvent('message', { data: { id: held[0]!.id, ok: true } satisfies OpfsReply }));
    await expect(first).resolves.toBeUndefined();
    channel.close();
  });

  it('fails a request the worker never answers in time (60 s by default), instead of hanging the download', async () => {
    const { writer, close } = connected(() => undefined, 50);
    await expect(writer.write('job-1', 0, new Uint8Array(4))).rejects.toThrow('the storage worker did not answer within 0.05 s');
    close();
  });
});

describe('OpfsStore over the writer', () => {
  it('records the ranges written, though each block moved to the worker (its view here is empty after)', async () => {
    const file = new Uint8Array(32);
    const { writer, close } = connected((r) => {
      if (r.op === 'write') file.set(r.data, r.offset);
      return { id: r.id, ok: true };
    });
    const store = await openOpfsStore(writer, { indexedDB: new IDBFactory() });
    const first = new Uint8Array(8).fill(1);
    await store.writeBlock('job', 0, first);
    await store.writeBlock('job', 16, new Uint8Array(8).fill(2));
    expect(first.byteLength).toBe(0);
    expect(await store.storedRanges('job')).toEqual([
      { start: 0, end: 8 },
      { start: 16, end: 24 },
    ]);
    expect([...file.subarray(0, 24)]).toEqual([...Array(8).fill(1), ...Array(8).fill(0), ...Array(8).fill(2)]);
    store.close();
    close();
  });
});

describe('jobFileName', () => {
  it('names a job file after its id, and refuses ids that could reach outside its file', () => {
    expect(jobFileName('5e6f1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b')).toBe('5e6f1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b.bytes');
    for (const id of ['', '../state', 'a/b', 'x'.repeat(65)]) expect(() => jobFileName(id)).toThrow(/invalid job id/);
  });
});
