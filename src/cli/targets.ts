import {
  fetchMetalink,
  filenameFromUrl,
  formatBytes,
  fromMetalinkFile,
  isHttpUrl,
  isSafeMetalinkName,
  METALINK_LIMITS,
  parseChecksumArgument,
  parseMetalink,
  sanitizeFilename,
  type ExpectedIntegrity,
  type MetalinkFile,
} from '../engine';
import { requester, userScope } from './requester';
import { readFile, stat } from 'node:fs/promises';
import type { SourceHint } from '../engine';
import type { GetCommand } from './args';

/** One file to download: its URLs, what it must hash to, and where it goes. */
export interface Target {
  url: string;
  mirrors: string[];
  /** What a Metalink file said about its URLs' order (priority, country). */
  hints?: Record<string, SourceHint>;
  expected?: ExpectedIntegrity;
  /** Relative output path a Metalink file prescribes (else the server's name is used). */
  name?: string;
  /** The URL is an HLS playlist or a DASH manifest: its stream is laid out (plan-stream.ts) before a new download. */
  stream?: boolean;
  /** The remote Metalink file that named `url`: what the user chose, which every request is judged against. */
  trustUrl?: string;
}

const METALINK = /\.(meta4|metalink)$/i;
const STREAM_MANIFEST = /\.(m3u8?|mpd)$/i;

/** A URL, or a Metalink file (local or remote) naming one or more files. */
export async function resolveTargets(command: GetCommand): Promise<Target[]> {
  const checksums = command.checksums.map((text) => {
    const digest = parseChecksumArgument(text);
    if (!digest) throw new Error(`--checksum needs ALGORITHM=HEX (sha-256, sha-512, sha-1, md5), not "${text}"`);
    return digest;
  });
  const expected = checksums.length > 0 ? { digests: checksums } : undefined;
  if (!METALINK.test(command.source)) {
    const url = httpUrl(command.source);
    if (!STREAM_MANIFEST.test(new URL(url).pathname)) return [{ url, mirrors: command.mirrors.map(httpUrl), expected }];
    if (command.mirrors.length > 0) throw new Error("-m does not apply to a stream: its playlist names the stream's hosts");
    return [{ url, mirrors: [], expected, stream: true }];
  }
  const remote = /^https?:\/\//i.test(command.source);
  const files = await readMetalink(command.source, remote);
  if (files.length === 0) throw new Error(`${command.source} describes no file`);
  if (files.length > 1 && command.output) throw new Error(`${command.source} describes ${files.length} files: -o works with one`);
  return files.map((file) => {
    if (!isSafeMetalinkName(file.name)) throw new Error(`${command.source} names an unsafe path: ${file.name}`);
    // A remote Metalink file is what the user chose: its URLs are judged as sources it advertises.
    // A local one is the user's own document: its URLs are used as given, like -m.
    const trust = remote ? { primaryUrl: httpUrl(command.source), covered: checksums.length > 0 } : undefined;
    const { urls, hints, expected: fromFile, refused } = fromMetalinkFile(file, 'the Metalink file', trust);
    for (const reason of refused) console.error(`stitch: ignored a URL of ${file.name}: ${reason}`);
    const [url, ...mirrors] = urls;
    if (!url) throw new Error(`${command.source} gives no usable http(s) URL for ${file.name}`);
    return {
      url,
      mirrors: [...mirrors, ...command.mirrors.map(httpUrl)],
      hints,
      expected: { ...fromFile, digests: [...fromFile.digests, ...checksums] },
      name: file.name,
      ...(trust && { trustUrl: trust.primaryUrl }),
    };
  });
}

/** The id of a target's partial download: named after where it goes, so a rerun finds it. */
export function targetId(target: Target): string {
  return sanitizeFilename((target.name ?? filenameFromUrl(target.url) ?? 'download').replaceAll('/', '_'));
}

async function readMetalink(source: string, remote: boolean): Promise<MetalinkFile[]> {
  // Through the door every request uses (requester.ts).
  if (remote) return fetchMetalink(source, requester(userScope(source)));
  if ((await stat(source)).size > METALINK_LIMITS.maxBytes)
    throw new Error(`${source} is larger than ${formatBytes(METALINK_LIMITS.maxBytes)}`);
  const parsed = parseMetalink(await readFile(source, 'utf8'));
  if ('error' in parsed) throw new Error(`${source} is not a valid Metalink file: ${parsed.error}`);
  return parsed.files;
}

export function httpUrl(text: string): string {
  let parsed: URL;
  try {
    parsed = new URL(text);
  } catch {
    throw new Error(`"${text}" is not a URL`);
  }
  if (!isHttpUrl(parsed)) throw new Error(`only http and https URLs are supported, not ${parsed.protocol}`);
  return parsed.href;
}
