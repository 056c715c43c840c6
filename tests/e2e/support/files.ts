import { createHash } from 'node:crypto';
import { createReadStream, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** SHA-256 of a file, streamed (never the whole file in memory). */
export async function fileSha256(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path, { highWaterMark: 4 * 1024 * 1024 })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Waits until `dir` holds a finished file named `name` of `size` bytes (any size: undefined); returns its path. */
export async function waitForFile(dir: string, name: string, size: number | undefined, timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  const path = join(dir, name);
  for (;;) {
    try {
      const found = statSync(path).size;
      if ((size === undefined || found === size) && !readdirSync(dir).some((f) => f.endsWith('.crdownload') || f.endsWith('.part')))
        return path;
    } catch {
      // not there yet
    }
    if (Date.now() > deadline)
      throw new Error(
        `no ${name} of ${size ?? 'any number of'} bytes in ${dir} after ${timeoutMs} ms; found: ${readdirSync(dir).join(', ') || 'nothing'}`,
      );
    await new Promise((r) => setTimeout(r, 200));
  }
}

export async function until<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
  timeoutMs: number,
  everyMs = 200,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
