import type { Exchange } from '../../http/exchange';
import { MirrorProblem } from '../../mirror-problem';

/** Reads a short body (a probe) into memory; more than `length` bytes is a lie. */
export async function readAll(exchange: Exchange, length: number): Promise<Uint8Array> {
  const bytes = new Uint8Array(length);
  let filled = 0;
  const reader = exchange.response.body?.getReader();
  if (!reader) return bytes.subarray(0, 0);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      exchange.watchdog.kick();
      if (filled + value.length > length) throw new MirrorProblem('it sent more bytes than it announced');
      bytes.set(value, filled);
      filled += value.length;
    }
  } finally {
    reader.releaseLock();
  }
  return bytes.subarray(0, filled);
}

/** Index of the first differing byte, or undefined when equal. */
export function firstDifference(a: Uint8Array, b: Uint8Array): number | undefined {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return a.length === b.length ? undefined : n;
}
