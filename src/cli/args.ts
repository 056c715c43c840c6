import { parseArgs } from 'node:util';

export const USAGE = `usage: stitch get URL [-o FILE] [options]

Downloads URL exactly: resumes broken or stalled transfers with validated range requests.
Running the same command again after an interruption continues from what was stored.

options:
  -o, --output FILE        where to save (default: the server's filename, in this folder)
  -m, --mirror URL         another URL of the same file; repeat for more. Blocks are fetched
                           from all of them at once; a mirror serving other bytes is dropped
      --connections N      requests in flight per server, 1-6 (default 2)
      --stats FILE         write a JSON summary (time, bytes, requests, memory, mirrors)
      --stall-timeout SEC  abandon and resume a connection silent this long (default 20)
      --retries N          attempts that receive nothing before giving up (default 8)
  -q, --quiet              no progress output
  -h, --help               this help`;

export interface GetCommand {
  url: string;
  output?: string;
  mirrors: string[];
  statsFile?: string;
  connectionsPerServer?: number;
  stallTimeoutMs?: number;
  maxAttemptsWithoutProgress?: number;
  quiet: boolean;
}

/** Parses argv (without node and script); throws an Error with a readable message. */
export function parseCommand(argv: string[]): GetCommand | 'help' {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      output: { type: 'string', short: 'o' },
      mirror: { type: 'string', short: 'm', multiple: true, default: [] },
      stats: { type: 'string' },
      connections: { type: 'string' },
      'stall-timeout': { type: 'string' },
      retries: { type: 'string' },
      quiet: { type: 'boolean', short: 'q', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) return 'help';
  const [command, url, ...rest] = positionals;
  if (command !== 'get') throw new Error(command ? `unknown command "${command}"` : 'missing command');
  if (!url) throw new Error('missing URL');
  if (rest.length > 0) throw new Error(`unexpected argument "${rest[0]}"`);
  const connections = optionalNumber(values.connections, '--connections', 1);
  if (connections !== undefined && connections > 6) throw new Error('--connections is at most 6');
  return {
    url: httpUrl(url),
    output: values.output,
    mirrors: (values.mirror ?? []).map(httpUrl),
    statsFile: values.stats,
    connectionsPerServer: connections,
    stallTimeoutMs: optionalNumber(values['stall-timeout'], '--stall-timeout', 1000),
    maxAttemptsWithoutProgress: optionalNumber(values.retries, '--retries', 1),
    quiet: values.quiet ?? false,
  };
}

function httpUrl(text: string): string {
  let parsed: URL;
  try {
    parsed = new URL(text);
  } catch {
    throw new Error(`"${text}" is not a URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error(`only http and https URLs are supported, not ${parsed.protocol}`);
  return parsed.href;
}

function optionalNumber(value: string | undefined, name: string, scale: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} needs a positive number, not "${value}"`);
  return Math.round(n * scale);
}
