import { describe, expect, it } from 'vitest';
import { BlockWriter } from '../../src/engine/block-writer';
import type { DownloadStore } from '../../src/engine/store';
import { pattern } from '../support/store-contract';
import { WriteGate } from '../../src/engine/write-gate';

/** A store that copies every block and notes which buffer lent it. */
function recordingStore(blockSize: number, writeConcurrency: number) {
  const lenders = new Set<ArrayBufferLike>();
  const blocks = new Map<number, Uint8Array>();
  const store = {
    blockSize,
    writeConcurrency,
    async writeBlock(_jobId: string, offset: number, data: Uint8Array) {
      lenders.add(data.buffer);
      const copy = data.slice();
      // Settles later, so several writes are in flight at once.
      await new Promise((resolve) => setImmediate(resolve));
      blocks.set(offset, copy);
    },
  } as unknown as DownloadStore;
  return { store, lenders, blocks };
}

/** A store that moves each buffer away, as OpfsStore moves it to its worker; `handBack`: and returns it after the write. */
function movingStore(blockSize: number, writeConcurrency: number, handBack: boolean) {
  const blocks = new Map<number, Uint8Array>();
  const store = {
    blockSize,
    writeConcurrency,
    async writeBlock(_jobId: string, offset: number, data: Uint8Array) {
      const moved = structuredClone(data, { transfer: [data.buffer] });
      await new Promise((resolve) => setImmediate(resolve));
      blocks.set(offset, moved.slice());
      return handBack ? structuredClone(moved, { transfer: [moved.buffer] }) : undefined;
    },
  } as unknown as DownloadStore;
  return { store, blocks };
}

describe('BlockWriter', () => {
  it('reuses the buffers of settled writes: memory stays flat however many blocks pass', async () => {
    const blockSize = 4096;
    const { store, lenders, blocks } = recordingStore(blockSize, 4);
    const writer = new BlockWriter(store, 'job');
    const content = pattern(3, 200 * blockSize + 123);
    // Chunks of odd sizes, as a socket delivers them.
    for (let at = 0; at < content.length; at += 2500) await writer.push(content.subarray(at, at + 2500));
    await writer.flush();

    expect(blocks.size).toBe(201);
    const stored = new Uint8Array(content.length);
    for (const [offset, bytes] of blocks) stored.set(bytes, offset);
    expect(Buffer.from(stored).equals(content)).toBe(true);
    // Writes in flight plus the one being filled, not one per block.
    expect(lenders.size).toBeLessThanOrEqual(4 + 2);
  });

  it('writes every byte right through a store that takes each buffer (OpfsStore moves it to its worker)', async () => {
    const blockSize = 4096;
    const { store, blocks } = movingStore(blockSize, 4, false);
    const reported: [number, number][] = [];
    const writer = new BlockWriter(store, 'job', undefined, (start, end) => reported.push([start, end]));
    const content = pattern(5, 50 * blockSize + 7);
    for (let at = 0; at < content.length; at += 3000) await writer.push(content.subarray(at, at + 3000));
    await writer.flush();

    const stored = new Uint8Array(content.length);
    for (const [offset, bytes] of blocks) stored.set(bytes, offset);
    expect(blocks.size).toBe(51);
    expect(Buffer.from(stored).equals(content)).toBe(true);
    // What it reports stored is what was written, though the buffers are gone.
    expect(writer.stored).toBe(content.length);
    expect(reported.reduce((sum, [start, end]) => sum + end - start, 0)).toBe(content.length);
    expect(reported.find(([start]) => start === 50 * blockSize)).toEqual([50 * blockSize, content.length]);
  });

  it('reuses a buffer the store moved away and hands back: no fresh memory per block', async () => {
    const blockSize = 4096;
    const { store, blocks } = movingStore(blockSize, 2, true);
    const gate = new WriteGate(2);
    const recycled = new Set<Uint8Array>();
    let reused = 0;
    const take = gate.takeBuffer.bind(gate);
    const recycle = gate.recycle.bind(gate);
    gate.takeBuffer = (size) => {
      const buffer = take(size);
      if (recycled.has(buffer)) reused++;
      return buffer;
    };
    gate.recycle = (buffer) => {
      recycled.add(buffer);
      recycle(buffer);
    };
    const writer = new BlockWriter(store, 'job', gate);
    const content = pattern(6, 40 * blockSize);
    for (let at = 0; at < content.length; at += 1000) await writer.push(content.subarray(at, at + 1000));
    await writer.flush();

    const stored = new Uint8Array(content.length);
    for (const [offset, bytes] of blocks) stored.set(bytes, offset);
    expect(Buffer.from(stored).equals(content)).toBe(true);
    // Only the first blocks needed new memory; the rest went into buffers handed back.
    expect(reused).toBeGreaterThan(35);
  });
});
