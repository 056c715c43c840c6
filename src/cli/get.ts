import { constants, lstatSync } from 'node:fs';
import { lstat, mkdir, rename, unlink, writeFile } from 'node:fs/promises';
import { basename, dirname, extname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import {
  countryOfLocale,
  DownloadJob,
  englishDrop,
  englishNotice,
  formatBytes,
  planStream,
  RateLimiter,
  recordLiveStream,
  StreamRefusal,
  rangesLength,
  sanitizeFilename,
  type JobSnapshot,
  type LiveRecording,
  type StreamLayout,
} from '../engine';
import { FileStore, openOwnFile } from '../storage/file-store';
import type { GetCommand } from './args';
import { claimMetalinkFolder, numberedName } from './metalink-folder';
import { createNodeHasher } from './node-hasher';
import { enginePort, requester, userScope } from './requester';
import { resolveTargets, targetId, type Target } from './targets';
import { formatDuration, progressLine } from './progress-line';

/** Runs `stitch get`; returns the process exit code. */
export async function runGet(command: GetCommand): Promise<number> {
  let targets: Target[];
  try {
    targets = await resolveTargets(command);
  } catch (error) {
    console.error(`stitch: ${(error as Error).message}`);
    return 2;
  }
  let folder: string;
  try {
    folder = saveFolder(command, targets);
  } catch (error) {
    return failed(error);
  }
  let code = 0;
  for (const target of targets) {
    const result = await download(command, target, folder).catch(failed);
    code = Math.max(code, result);
    if (code === 130) break;
  }
  return code;
}

/** A file system refusal (a bad -o, a planted link, no space for the folder) is a plain failure. */
function failed(error: unknown): number {
  console.error(bounded(`stitch: failed: ${(error as Error).message}`));
  return 1;
}

/** A line printed is cut to this many characters: its words may come from a server (a URI of megabytes). */
const MAX_LINE_CHARS = 2_000;
/** A stream's notes printed at most, then how many more there were. */
const MAX_NOTES_SHOWN = 10;

function bounded(line: string): string {
  return line.length <= MAX_LINE_CHARS ? line : `${line.slice(0, MAX_LINE_CHARS - 1)}…`;
}

/**
 * The folder the files go in: -d's, else the working folder. A Metalink's files (unless -o names
 * its one file) go in a new folder of its own there: its names must not reach into folders that
 * were there before.
 */
function saveFolder(command: GetCommand, targets: Target[]): string {
  const base = resolve(command.dir ?? '.');
  // Only a Metalink's targets have names.
  if (command.output !== undefined || !targets.some((target) => target.name !== undefined)) return base;
  const folder = command.dir === undefined ? claimMetalinkFolder(base, command.source) : base;
  log(command, `stitch: saving the Metalink's files in ${shownFolder(folder)}`);
  return folder;
}

/** `./NAME/` for a folder inside the working folder, else its whole path. */
function shownFolder(folder: string): string {
  const path = relative(process.cwd(), folder);
  if (path === '') return `.${sep}`;
  const outside = path === '..' || path.startsWith(`..${sep}`) || isAbsolute(path);
  return outside ? join(folder, sep) : `.${sep}${path}${sep}`;
}

async function download(command: GetCommand, target: Target, folder: string): Promise<number> {
  // The partial download is named after where it goes, so running again finds it.
  const named = command.output ?? target.name;
  const wanted = named === undefined ? undefined : resolve(folder, named);
  const dir = wanted ? dirname(wanted) : folder;
  if (!command.output && target.name) await refuseLinkedFolders(folder, target.name);
  // The partial files' names must be safe on every OS even when the output's is not (`-o a:b.bin`).
  const id = wanted ? sanitizeFilename(basename(wanted)) : targetId(target);
  const store = new FileStore(dir);
  const options = {
    connectionsPerServer: command.connectionsPerServer,
    maxConnectionsPerServer: command.maxConnectionsPerServer,
    stallTimeoutMs: command.stallTimeoutMs,
    maxAttemptsWithoutProgress: command.maxAttemptsWithoutProgress,
    createHasher: createNodeHasher,
    userLocation: countryOfLocale(process.env.LC_ALL || process.env.LC_MESSAGES || process.env.LANG),
    fetch: enginePort,
    rateLimiter: command.limitRate === undefined ? undefined : new RateLimiter(command.limitRate),
    trustUrl: target.trustUrl,
  };
  const defined = Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined));
  let job = await DownloadJob.open(store, id, defined);
  const askedUrl = job && (job.state.stream?.playlist ?? job.state.url);
  if (job && askedUrl !== target.url) {
    log(command, `stitch: ${id} was a download of ${askedUrl}; starting over for ${target.url}`);
    await job.cancel();
    job = undefined;
  }
  if (job) {
    log(command, `stitch: resuming ${id}`);
    if (JSON.stringify(job.state.expected) !== JSON.stringify(target.expected)) await job.setExpected(target.expected);
  }
  try {
    job ??= await DownloadJob.create(
      store,
      target.stream
        ? { id, ...(await streamSources(command, target.url)), expected: target.expected }
        : { id, url: target.url, mirrors: target.mirrors, hints: target.hints, expected: target.expected },
      defined,
    );
  } catch (error) {
    if (!(error instanceof StreamRefusal && error.reason === 'live')) throw error;
    await store.close();
    return recordLive(command, target.url, id, wanted, dir);
  }

  const started = Date.now();
  const show = progressPrinter(command);
  job.on('progress', show);
  job.on('notice', (notice) => log(command, `\nstitch: ${englishNotice(notice)}`));
  const stop = () => job.pause();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const result = await job.run();
  process.off('SIGINT', stop);
  process.off('SIGTERM', stop);
  show(result, true);
  if (command.statsFile) await writeStats(command.statsFile, result, started);

  try {
    return await finish(command, store, job, result, wanted ?? join(dir, result.filename ?? id), started);
  } finally {
    await store.close();
  }
}

async function finish(
  command: GetCommand,
  store: FileStore,
  job: DownloadJob,
  result: JobSnapshot,
  wanted: string,
  started: number,
): Promise<number> {
  if (result.status === 'complete') {
    const path = command.output ? wanted : unusedPath(wanted);
    await mkdir(dirname(path), { recursive: true });
    await store.finish(job.id, path);
    const seconds = (Date.now() - started) / 1000;
    log(command, `stitch: saved ${path} (${formatBytes(result.size ?? 0)}) in ${formatDuration(seconds)}`);
    return 0;
  }
  if (result.status === 'paused') {
    const why = result.error ? `${result.error.message}; ` : '';
    console.error(bounded(`stitch: paused: ${why}run the same command again to resume`));
    return result.error ? 1 : 130;
  }
  console.error(bounded(`stitch: failed: ${result.error?.message ?? result.status}`));
  // After a digest mismatch nothing is kept (the bytes were wrong): say only what is true.
  const kept = rangesLength(await store.storedRanges(job.id));
  // A refused answer comes again on a retry: another source of the file is what helps.
  const next =
    result.error?.code === 'protocol' ? 'add another source of the file with -m URL to go on' : 'run the same command again to retry';
  console.error(`stitch: ${kept > 0 ? `the ${formatBytes(kept)} received are kept; ` : ''}${next}`);
  return 1;
}

/** "name.ext", else "name (1).ext", … so an existing file (or link) is never overwritten unasked. */
function unusedPath(path: string): string {
  const ext = extname(path);
  return numberedName(path.slice(0, path.length - ext.length), ext, (p) => lstatSync(p, { throwIfNoEntry: false }) === undefined);
}

/**
 * Records a live HLS stream into a file until its playlist ends or Ctrl-C stops it; what was
 * recorded is saved either way (whole segments), also when the stream fails midway.
 */
async function recordLive(command: GetCommand, url: string, id: string, wanted: string | undefined, dir: string): Promise<number> {
  const partial = join(dir, `${id}.stitch-live`);
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  log(command, 'stitch: a live stream: recording until it ends, or until Ctrl-C stops it');
  const started = Date.now();
  // Never through a link planted under its name (file-store.ts); emptied only once known to be Stitch's own.
  const out = await openOwnFile(partial, constants.O_WRONLY);
  await out.truncate(0);
  let recording: LiveRecording | undefined;
  let failure: unknown;
  try {
    recording = await recordLiveStream(url, {
      fetch: requester(userScope(url)),
      signal: controller.signal,
      write: async (bytes) => void (await out.write(bytes)),
      onProgress: (r) => {
        if (!command.quiet)
          process.stderr.write(`recording: ${r.segments} segments, ${formatDuration(r.seconds)}, ${formatBytes(r.bytes)}\n`);
        recording = r;
      },
    });
  } catch (error) {
    failure = error;
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    await out.close();
  }
  if (!recording || recording.segments === 0) {
    await unlink(partial).catch(() => {});
    if (failure) return failed(failure);
    console.error('stitch: stopped before a segment was recorded: nothing saved');
    return 130;
  }
  const stem = basename(id).replace(/\.m3u8?$/i, '');
  const path = command.output && wanted ? wanted : unusedPath(wanted ?? join(dir, `${stem}.${recording.container.extension}`));
  await rename(partial, path);
  const how = failure ? `the stream failed (${(failure as Error).message}); ` : recording.ended ? 'the stream ended; ' : '';
  log(
    command,
    `stitch: ${how}saved ${path} (${formatDuration(recording.seconds)} of video, ${formatBytes(recording.bytes)}) in ${formatDuration((Date.now() - started) / 1000)}`,
  );
  if (recording.missed > 0)
    log(command, `stitch: ${recording.missed} segments left the live window before they could be fetched: the recording has gaps`);
  return failure ? 1 : 0;
}

/** A stream (HLS or DASH) laid out as one file: its variant, hosts and segments (the engine's plan-stream.ts). */
async function streamSources(command: GetCommand, url: string): Promise<{ url: string; mirrors: string[]; stream: StreamLayout }> {
  const fetch = requester(userScope(url));
  const { layout, variants, notes } = await planStream(url, { fetch });
  for (const note of notes.slice(0, MAX_NOTES_SHOWN)) log(command, `stitch: ${note}`);
  if (notes.length > MAX_NOTES_SHOWN) log(command, `stitch: and ${notes.length - MAX_NOTES_SHOWN} more notes about the stream`);
  const [primary, ...others] = layout.sources;
  const chosen = variants[0];
  const quality = chosen
    ? `${chosen.resolution ? `${chosen.resolution.width}×${chosen.resolution.height}, ` : ''}${Math.round((chosen.bandwidth ?? 0) / 1000)} kbit/s (the best of ${variants.length}), `
    : '';
  const hosts = layout.sources.length > 1 ? ` from ${layout.sources.length} hosts` : '';
  log(
    command,
    `stitch: ${layout.kind === 'dash' ? 'a DASH' : 'an HLS'} stream: ${quality}${formatDuration(layout.durationSeconds)} in ${layout.parts.length} parts${hosts}`,
  );
  return { url: primary!.url, mirrors: others.map((source) => source.url), stream: layout };
}

/** A Metalink's folders are Stitch's own or in the one -d chose: a link among them would lead elsewhere. */
async function refuseLinkedFolders(base: string, name: string): Promise<void> {
  let path = base;
  for (const folder of name.split('/').slice(0, -1)) {
    path += sep + folder;
    const stats = await lstat(path).catch(() => undefined);
    if (!stats) return;
    if (!stats.isDirectory()) throw new Error(`${path} is a link or a file, not a folder: the Metalink file's ${name} cannot go there`);
  }
}

function progressPrinter(command: GetCommand): (s: JobSnapshot, last?: boolean) => void {
  const tty = process.stderr.isTTY;
  let lastLine = 0;
  return (snapshot, last = false) => {
    if (command.quiet) return;
    if (tty) {
      process.stderr.write(`\r${progressLine(snapshot)}\x1b[K${last ? '\n' : ''}`);
    } else if (last || Date.now() - lastLine >= 1000) {
      // Logs and pipes get a line a second instead of carriage returns.
      lastLine = Date.now();
      process.stderr.write(`${progressLine(snapshot)}\n`);
    }
  };
}

/** A machine-readable summary for benchmarks and scripts. */
async function writeStats(path: string, result: JobSnapshot, started: number): Promise<void> {
  const stats = {
    status: result.status,
    seconds: (Date.now() - started) / 1000,
    size: result.size,
    bytesReceived: result.mirrors.reduce((sum, m) => sum + m.bytes, 0),
    requests: result.mirrors.reduce((sum, m) => sum + m.requests, 0),
    peakRssBytes: process.resourceUsage().maxRSS * 1024,
    mirrors: result.mirrors.map(({ url, bytes, requests, dropped }) => ({
      url,
      bytes,
      requests,
      dropped: dropped && englishDrop(dropped),
    })),
    error: result.error,
  };
  await writeFile(path, `${JSON.stringify(stats, null, 2)}\n`);
}

function log(command: GetCommand, message: string): void {
  if (!command.quiet) console.error(bounded(message));
}
