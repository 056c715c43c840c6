import { describe, expect, it } from 'vitest';
import { BlockWriter } from '../../src/engine/block-writer';
import { DownloadError } from '../../src/engine/errors';
import { receiveBody, type Exchange } from '../../src/engine/http/exchange';
import type { DownloadStore } from '../../src/engine/store';
import { pattern } from '../support/store-contract';

const BLOCK = 4096;

/** A store keeping copies of the blocks written, as one file. */
function memoryStore(size: number) {
  const file = new Uint8Array(size);
  const store = {
    blockSize: BLOCK,
    writeConcurrency: 2,
    async writeBlock(_jobId: string, offset: number, data: Uint8Array) {
      file.set(data, offset);
    },
  } as unknown as DownloadStore;
  return { store, file };
}

function exchangeOf(body: ReadableStream<Uint8Array>): Exchange {
  return { response: { body }, watchdog: { kick() {} }, signal: new AbortController().signal } as unknown as Exchange;
}

/** A byte stream (as fetch's bodies are) serving `content` in pieces of at most `piece` bytes. */
function byteStream(content: Uint8Array, piece: number) {
  const pulls = { total: 0, intoReadersBuffer: 0 };
  let at = 0;
  const body = new ReadableStream({
    type: 'bytes',
    pull(controller: ReadableByteStreamController) {
      pulls.total++;
      if (at >= content.length) {
        controller.close();
        controller.byobRequest?.respond(0);
        return;
      }
      const request = controller.byobRequest;
      if (request?.view) {
        pulls.intoReadersBuffer++;
        const view = new Uint8Array(request.view.buffer, request.view.byteOffset, request.view.byteLength);
        const n = Math.min(piece, view.length, content.length - at);
        view.set(content.subarray(at, at + n));
        at += n;
        request.respond(n);
      } else {
        controller.enqueue(content.slice(at, at + piece));
        at += piece;
      }
    },
  }) as ReadableStream<Uint8Array>;
  return { body, pulls };
}

describe('receiveBody', () => {
  it("reads a byte stream into the reader's own buffer on every read, and stores every byte", async () => {
    const content = pattern(7, 50 * BLOCK + 77);
    const { store, file } = memoryStore(content.length);
    const { body, pulls } = byteStream(content, 3000);
    const writer = new BlockWriter(store, 'job');
    const complete = await receiveBody(exchangeOf(body), { start: 0, end: content.length }, writer, () => {});
    await writer.flush();
    expect(complete).toBe(true);
    expect(Buffer.from(file).equals(content)).toBe(true);
    // Every read brought its buffer: the stream allocated none.
    expect(pulls.intoReadersBuffer).toBe(pulls.total - 1);
  });

  it('fails with bad-length when a byte stream sends more than the range it announced', async () => {
    const content = pattern(8, 10 * BLOCK);
    const { store } = memoryStore(content.length);
    const { body } = byteStream(content, 1000);
    const writer = new BlockWriter(store, 'job');
    const receiving = receiveBody(exchangeOf(body), { start: 0, end: 9 * BLOCK }, writer, () => {});
    await expect(receiving).rejects.toSatisfy((error) => error instanceof DownloadError && error.code === 'bad-length');
  });

  it("reads a response's end after its last byte, which hands its connection back (a stream of chunks too)", async () => {
    const content = pattern(9, 3 * BLOCK);
    const { store, file } = memoryStore(content.length);
    let endRead = false;
    let at = 0;
    const body = new ReadableStream<Uint8Array>(
      {
        pull(controller) {
          if (at >= content.length) {
            endRead = true;
            controller.close();
            return;
          }
          controller.enqueue(content.slice(at, at + 5000));
          at += 5000;
        },
      },
      { highWaterMark: 0 },
    );
    const writer = new BlockWriter(store, 'job');
    // The request was cut at the end of its range, as a block's group ends there.
    const complete = await receiveBody(
      exchangeOf(body),
      { start: 0, end: content.length },
      writer,
      () => {},
      undefined,
      () => content.length,
    );
    await writer.flush();
    expect(complete).toBe(true);
    expect(endRead).toBe(true);
    expect(Buffer.from(file).equals(content)).toBe(true);
  });
  it("ends when its request is aborted while the read of the body's end never settles (as undici sometimes leaves it)", async () => {
    const content = pattern(9, 3 * BLOCK);
    const { store } = memoryStore(content.length);
    let delivered = false;
    // Every byte, then a read that neither delivers nor closes.
    const body = new ReadableStream({
      type: 'bytes',
      pull(controller: ReadableByteStreamController) {
        if (delivered) return new Promise<void>(() => {});
        delivered = true;
        controller.enqueue(content.slice());
      },
    }) as ReadableStream<Uint8Array>;
    const controller = new AbortController();
    const exchange = { response: { body }, watchdog: { kick() {} }, signal: controller.signal } as unknown as Exchange;
    const writer = new BlockWriter(store, 'job');
    const received = receiveBody(exchange, { start: 0, end: content.length }, writer, () => {
      // The last bytes are in: the request is aborted (another copy won) while the end is read.
      setTimeout(() => controller.abort('lost'), 10);
    });
    await expect(received).rejects.toBe('lost');
  });
});
