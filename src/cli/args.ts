import { parseArgs } from 'node:util';
import { DEFAULT_OPTIONS, MAX_CONNECTIONS_PER_SERVER } from '../engine';

const defaults = DEFAULT_OPTIONS;

export const USAGE = `usage: stitch get URL|FILE.meta4 [-o FILE] [-d DIR] [options]

Downloads URL exactly: resumes broken or stalled transfers with validated range requests.
Running the same command again after an interruption continues from what was stored.
A Metalink file (.meta4, local or a URL) downloads each file it describes from all its
URLs and checks its hashes. Its files go in a new folder named after it (NAME.meta4: ./NAME/,
or ./NAME (1)/ when NAME is taken), never in a folder that was here before.

options:
  -o, --output FILE        where to save (default: the server's filename, in this folder);
                           for a Metalink file, where its one file goes
  -d, --dir DIR            save in DIR (made if missing) instead of this folder; a Metalink
                           file's files go in DIR itself, not in a new folder; a relative
                           -o FILE is inside DIR
  -m, --mirror URL         another URL of the same file; repeat for more. Blocks are fetched
                           from all of them at once; a mirror serving other bytes is dropped
      --checksum ALG=HEX   the file's digest (sha-256, sha-512, sha-1, md5): a file that does
                           not match is never saved
      --connections N      connections to start with per server, 1-${MAX_CONNECTIONS_PER_SERVER} (default ${defaults.connectionsPerServer});
                           more are opened while they raise the server's rate, up to --max-connections
      --max-connections N  at most N connections to one server, 1-64 (default ${defaults.maxConnectionsPerServer}); some
                           sites ban clients that open several: use 1 there
      --limit-rate RATE    at most RATE bytes/s over all connections (e.g. 500k, 2M)
      --stats FILE         write a JSON summary (time, bytes, requests, memory, mirrors)
      --stall-timeout SEC  abandon and resume a connection silent this long (default ${defaults.stallTimeoutMs / 1000})
      --retries N          attempts that receive nothing before giving up (default ${defaults.maxAttemptsWithoutProgress})
  -q, --quiet              no progress output
  -h, --help               this help`;

export interface GetCommand {
  /** A URL or a Metalink file. */
  source: string;
  output?: string;
  /** The folder to save in (-o's relative path included), instead of the working folder. */
  dir?: string;
  mirrors: string[];
  checksums: string[];
  statsFile?: string;
  connectionsPerServer?: number;
  maxConnectionsPerServer?: number;
  limitRate?: number;
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
      dir: { type: 'string', short: 'd' },
      mirror: { type: 'string', short: 'm', multiple: true, default: [] },
      stats: { type: 'string' },
      checksum: { type: 'string', multiple: true, default: [] },
      connections: { type: 'string' },
      'max-connections': { type: 'string' },
      'limit-rate': { type: 'string' },
      'stall-timeout': { type: 'string' },
      retries: { type: 'string' },
      quiet: { type: 'boolean', short: 'q', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) return 'help';
  const [command, source, ...rest] = positionals;
  if (command !== 'get') throw new Error(command ? `unknown command "${command}"` : 'missing command');
  if (!source) throw new Error('missing URL');
  if (rest.length > 0) throw new Error(`unexpected argument "${rest[0]}"`);
  const connections = optionalNumber(values.connections, '--connections', 1);
  if (connections !== undefined && connections > MAX_CONNECTIONS_PER_SERVER)
    throw new Error(`--connections is at most ${MAX_CONNECTIONS_PER_SERVER}`);
  return {
    source,
    output: values.output,
    dir: values.dir,
    mirrors: values.mirror ?? [],
    checksums: values.checksum ?? [],
    statsFile: values.stats,
    connectionsPerServer: connections,
    maxConnectionsPerServer: wholeNumber(values['max-connections'], '--max-connections', MAX_CONNECTIONS_LIMIT),
    limitRate: values['limit-rate'] === undefined ? undefined : parseRate(values['limit-rate']),
    stallTimeoutMs: optionalNumber(values['stall-timeout'], '--stall-timeout', 1000),
    maxAttemptsWithoutProgress: optionalNumber(values.retries, '--retries', 1),
    quiet: values.quiet ?? false,
  };
}

/** "500k", "2M", "1.5m", "4096": bytes per second (k and M are 1024-based, as in curl and wget). */
function parseRate(text: string): number {
  const match = /^(\d+(?:\.\d+)?)([kKmMgG]?)$/.exec(text.trim());
  const scale = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[(match?.[2] ?? '').toLowerCase()];
  const rate = match && scale ? Math.round(Number(match[1]) * scale) : NaN;
  if (!(rate >= 1024)) throw new Error(`--limit-rate needs a rate of at least 1k, like 500k or 2M, not "${text}"`);
  return rate;
}

/** The most --max-connections accepts: more would look like an attack to most servers. */
const MAX_CONNECTIONS_LIMIT = 64;

function wholeNumber(value: string | undefined, name: string, max: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > max) throw new Error(`${name} needs a whole number from 1 to ${max}, not "${value}"`);
  return n;
}

function optionalNumber(value: string | undefined, name: string, scale: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} needs a positive number, not "${value}"`);
  return Math.round(n * scale);
}
