/**
 * Runs a mirror until interrupted, for poking at it by hand (curl, the extension):
 *   main(['--size', '1G', '--rate', '20M', '--port', '8080'])
 * Node 20 cannot run TypeScript itself, so import `main` from a TS-aware runner (vitest, vite);
 * the benchmarks import startMirror directly. Flags: --size --seed --rate --connection-rate
 * --latency (ms) --port --path --filename; sizes and rates take K/M/G suffixes (powers of 1024).
 */
import { fileURLToPath } from 'node:url';
import { startMirror, type Mirror, type MirrorOptions } from './mirror-server';

export function parseAmount(text: string): number {
  const match = /^(\d+(?:\.\d+)?)([kmg]?)i?b?$/i.exec(text.trim());
  if (!match) throw new Error(`not an amount: ${text}`);
  const power = ' kmg'.indexOf((match[2] || ' ').toLowerCase());
  return Math.round(Number(match[1]) * 1024 ** power);
}

export function parseArgs(argv: readonly string[]): MirrorOptions {
  const options: MirrorOptions = { size: 100 * 1024 * 1024 };
  for (let i = 0; i < argv.length; i += 2) {
    const flag = argv[i];
    const value = argv[i + 1];
    if (value === undefined) throw new Error(`missing value for ${flag}`);
    switch (flag) {
      case '--size':
        options.size = parseAmount(value);
        break;
      case '--seed':
        options.seed = Number(value);
        break;
      case '--rate':
        options.rate = parseAmount(value);
        break;
      case '--connection-rate':
        options.connectionRate = parseAmount(value);
        break;
      case '--latency':
        options.latencyMs = Number(value);
        break;
      case '--port':
        options.port = Number(value);
        break;
      case '--path':
        options.path = value;
        break;
      case '--filename':
        options.filename = value;
        break;
      default:
        throw new Error(`unknown flag ${flag}`);
    }
  }
  return options;
}

/** Starts the mirror, prints its URL, and closes it on SIGINT/SIGTERM. */
export async function main(argv: readonly string[]): Promise<Mirror> {
  const mirror = await startMirror(parseArgs(argv));
  console.log(mirror.url);
  const stop = () => void mirror.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return mirror;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
