/**
 * `npm run bench:play [-- --runs 3 --only webm-2MB@2x,mirrors --browsers chromium]`: issue 26's
 * playback matrix. Clips made the way users' files are (tests/support/clips.ts) on servers of a
 * few kinds (tests/e2e/support/play-case.ts), played while they download by Stitch's player and,
 * for reference, by the browser's own <video> on a fresh server of the same case, in Chromium
 * (Stitch's service-worker route) and Firefox (its Media Source route). Times the first frame and
 * each seek until it plays; Stitch's saved file must be exact. Prints a table per browser and
 * writes every run, with what each server was asked and when, to bench/results/play.json.
 * See bench/README.md.
 */
import { spawnSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import type { Page as PlaywrightPage } from 'playwright-core';
import { fileSha256, waitForFile } from '../tests/e2e/support/files';
import { type Cleanup } from '../tests/e2e/support/firefox';
import {
  elementRequestText,
  openOwnVideo,
  openStitchPlayer,
  SERVER_SETUPS,
  serveClip,
  type ElementRequest,
  type PlayBrowser,
  type ServerSetupId,
} from '../tests/e2e/support/play-case';
import { earlySeekAndTime, firstFrameMs, playedTo, seeksAndTime, type AnyPage } from '../tests/e2e/support/player';
import { startMirror, type Mirror } from '../tests/support/mirror-server';
import * as clips from '../tests/support/clips';
import type { Clip, ClipRecipe } from '../tests/support/clips';

const FILES: ClipRecipe[] = [
  clips.WEBM_2MB,
  clips.WEBM_16MB,
  clips.WEBM_CUES_FRONT,
  clips.MP4_MOOV_END,
  clips.MP4_FASTSTART,
  clips.FRAGMENTED_MP4,
  clips.OPUS_WEBM,
  clips.MP3,
  clips.LONG_WEBM,
];

/**
 * The matrix run by default: every file on one server at 2×, and the other servers on the
 * files they tell most about (issue 26's two reports are webm-2MB@2x and webm-16MB@mirrors).
 * `--all`: every file on every server.
 */
const DEFAULT_CASES = [
  ...FILES.map((f) => `${f.name}@2x`),
  'webm-2MB@1.3x',
  'webm-16MB@1.3x',
  'webm-16MB@mirrors',
  'webm-16MB@far',
  'mp4-moov-end@1.3x',
  'mp4-moov-end@mirrors',
  'mp4-moov-end@far',
];

interface Case {
  id: string;
  file: ClipRecipe;
  server: ServerSetupId;
}

const ACTIONS = ['first', 'seek20', 'seek50', 'seek80', 'back30', 'burst', 'early'] as const;
type Action = (typeof ACTIONS)[number];
const ACTION_TITLES: Record<Action, string> = {
  first: 'first frame',
  seek20: '20 %',
  seek50: '50 %',
  seek80: '80 %',
  back30: 'back 30 %',
  burst: '3 seeks',
  early: 'early 60 %',
};
/** Seeks in the main load, in order: to a fraction of the duration, or several 300 ms apart (timed from the last). */
const SEEKS: { action: Action; fractions: number[] }[] = [
  { action: 'seek20', fractions: [0.2] },
  { action: 'seek50', fractions: [0.5] },
  { action: 'seek80', fractions: [0.8] },
  { action: 'back30', fractions: [0.3] },
  { action: 'burst', fractions: [0.45, 0.6, 0.9] },
];
const EARLY_FRACTION = 0.6;
const BURST_GAP_MS = 300;
const FIRST_FRAME_TIMEOUT_MS = 30_000;
const SEEK_TIMEOUT_MS = 20_000;
/** Issue 26: no seek anywhere over 6 s. */
const SEEK_LIMIT_MS = 6000;

interface Client {
  name: string;
  browser: PlayBrowser;
  stitch: boolean;
}

/** One step of a load: when it began (ms since the load's servers started), what it was for, and how long it took. */
interface Step {
  at: number;
  name: string;
  ms?: number;
  error?: string;
  /** A seek's target, and the keyframe the player must fetch for it. */
  target?: { seconds: number; keyframeSeconds: number; byte: number };
}

interface Request {
  server: number;
  at: number;
  ms: number;
  range: string;
  bytes: number;
  cut: boolean;
}

/** One page load: `main` (first frame, then the seeks) or `early` (a seek as soon as the duration is known). */
interface Load {
  load: 'main' | 'early';
  steps: Step[];
  requests: Request[];
  /** Stitch in Chromium: what the <video> asked the stream route (`at` in ms since the load's servers started). */
  elementRequests: ElementRequest[];
  /** Stitch only: the saved file against the clip's SHA-256. */
  file?: 'exact' | 'WRONG FILE' | 'missing';
}

interface Run {
  caseId: string;
  client: string;
  rep: number;
  times: Partial<Record<Action, number>>;
  /** When the early seek was made, ms since the page's navigation. */
  earlyAt?: number;
  loads: Load[];
  errors: string[];
  /** Requests the servers received, and bytes they sent ÷ the clip's size (the main load). */
  requests: number;
  overFetch: number;
}

function options() {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string', default: '1' },
      only: { type: 'string' },
      all: { type: 'boolean', default: false },
      browsers: { type: 'string', default: 'chromium,firefox' },
      actions: { type: 'string' },
      'no-reference': { type: 'boolean', default: false },
      timeline: { type: 'boolean', default: false },
      list: { type: 'boolean', default: false },
    },
  });
  const runs = Number(values.runs);
  if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs needs a positive integer, not ${values.runs}`);
  const ids = values.all ? FILES.flatMap((f) => Object.keys(SERVER_SETUPS).map((s) => `${f.name}@${s}`)) : DEFAULT_CASES;
  const matrix = ids.map((id): Case => {
    const [name, server] = id.split('@') as [string, ServerSetupId];
    return { id, file: FILES.find((f) => f.name === name)!, server };
  });
  // --only: case ids, file names (their cases), or server setups (`mirrors`, `@far`: their cases).
  const wanted = values.only?.split(',').map((w) => w.trim().replace(/^@/, ''));
  const cases = wanted ? matrix.filter((c) => wanted.some((w) => w === c.id || w === c.file.name || w === c.server)) : matrix;
  if (cases.length === 0) throw new Error(`--only ${values.only}: no such case (${matrix.map((c) => c.id).join(', ')})`);
  const actions = values.actions ? (values.actions.split(',').map((a) => a.trim()) as Action[]) : [...ACTIONS];
  const unknown = actions.filter((a) => !ACTIONS.includes(a));
  if (unknown.length) throw new Error(`--actions ${unknown.join(',')}: no such action (${ACTIONS.join(', ')})`);
  const browsers = values.browsers.split(',').map((b) => b.trim()) as PlayBrowser[];
  const clients: Client[] = browsers.flatMap((browser) => [
    ...(values['no-reference'] ? [] : [{ name: `${browser} <video>`, browser, stitch: false }]),
    { name: `stitch ${browser}`, browser, stitch: true },
  ]);
  return { runs, cases, actions, clients, timeline: values.timeline, list: values.list };
}

/** The clip's keyframes (every packet of an audio clip): where a seek's bytes start. */
function keyframes(media: Clip): { seconds: number; byte: number }[] {
  const stream = media.videoKbps > 0 ? 'v:0' : 'a:0';
  const probe = spawnSync(
    'ffprobe',
    ['-v', 'error', '-select_streams', stream, '-show_entries', 'packet=pts_time,pos,flags', '-of', 'csv=p=0', media.path],
    { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 },
  );
  return probe.stdout
    .split('\n')
    .map((line) => line.split(','))
    .filter(([time, pos, flags]) => time && pos && flags?.includes('K'))
    .map(([time, pos]) => ({ seconds: Number(time), byte: Number(pos) }))
    .sort((a, b) => a.seconds - b.seconds);
}

/** The target of a seek to `fraction`, and the last keyframe at or before it. */
function seekTarget(media: Clip, keys: { seconds: number; byte: number }[], fraction: number): Step['target'] {
  const seconds = media.durationSeconds * fraction;
  const key = keys.findLast((k) => k.seconds <= seconds) ?? keys[0]!;
  return { seconds, keyframeSeconds: key.seconds, byte: key.byte };
}

const message = (error: unknown) => (error instanceof Error ? error.message.split('\n')[0]! : String(error));

/** Plays one load of a case in one client, on fresh servers; returns what it measured. */
async function playLoad(
  c: Case,
  media: Clip,
  keys: { seconds: number; byte: number }[],
  client: Client,
  load: Load['load'],
  actions: Action[],
  run: Run,
): Promise<void> {
  const undo: (() => unknown)[] = [];
  const cleanup: Cleanup = (step) => undo.push(step);
  const record: Load = { load, steps: [], requests: [], elementRequests: [] };
  run.loads.push(record);
  const t0 = Date.now();
  let servers: Mirror[] = [];
  let elementRequests: ElementRequest[] = [];
  const step = async (name: string, measure: () => Promise<number>, target?: Step['target']): Promise<number | undefined> => {
    const s: Step = { at: Date.now() - t0, name, target };
    record.steps.push(s);
    try {
      s.ms = await measure();
      return s.ms;
    } catch (error) {
      s.error = message(error);
      run.errors.push(`${load} ${name}: ${s.error}`);
      return undefined;
    }
  };
  try {
    servers = await serveClip(media, SERVER_SETUPS[c.server], async (o) => {
      const m = await startMirror(o);
      cleanup(() => m.close());
      return m;
    });
    const url = servers[0]!.url;
    let page: AnyPage;
    let downloads: string | undefined;
    if (client.stitch) ({ page, downloads, elementRequests } = await openStitchPlayer(client.browser, url, cleanup));
    else page = await openOwnVideo(client.browser, url, cleanup);
    record.steps.push({ at: Date.now() - t0, name: 'page open' });

    if (load === 'early') {
      const target = seekTarget(media, keys, EARLY_FRACTION);
      run.times.early = await step(
        `early seek to ${EARLY_FRACTION * 100} %`,
        async () => {
          const early = await earlySeekAndTime(page, EARLY_FRACTION, SEEK_TIMEOUT_MS, media.durationSeconds);
          run.earlyAt = early.at;
          return early.ms;
        },
        target,
      );
    } else {
      run.times.first = await step('first frame', () => firstFrameMs(page, FIRST_FRAME_TIMEOUT_MS));
      if (run.times.first !== undefined && (await step('playing 1 s', () => playedTo(page, 1, 20_000).then(() => 0))) !== undefined) {
        for (const { action, fractions } of SEEKS.filter((s) => actions.includes(s.action))) {
          const target = seekTarget(media, keys, fractions.at(-1)!);
          const name = fractions.length > 1 ? `seeks to ${fractions.map((f) => f * 100).join(', ')} %` : `seek to ${fractions[0]! * 100} %`;
          run.times[action] = await step(
            name,
            async () => (await seeksAndTime(page, fractions, BURST_GAP_MS, SEEK_TIMEOUT_MS, media.durationSeconds)).ms,
            target,
          );
        }
      }
      run.requests = servers.reduce((n, s) => n + s.stats.requests.length, 0);
      run.overFetch = servers.reduce((n, s) => n + s.stats.bytesSent, 0) / media.size;
    }
    if (downloads !== undefined) {
      // Measured: the servers go uncapped so the rest of the download takes seconds, not minutes; the file must still be exact.
      for (const server of servers) server.setRate(undefined);
      record.steps.push({ at: Date.now() - t0, name: 'servers uncapped' });
      try {
        const saved = await waitForFile(downloads, media.filename, media.size, 120_000);
        record.file = (await fileSha256(saved)) === media.sha256 ? 'exact' : 'WRONG FILE';
      } catch (error) {
        record.file = 'missing';
        run.errors.push(`${load} file: ${message(error)}`);
        const says = await (page as PlaywrightPage).evaluate(() => document.body.innerText).catch(String);
        run.errors.push(`${load}: the player says: ${says.replace(/\s+/g, ' ').slice(0, 300)}`);
      }
      record.steps.push({ at: Date.now() - t0, name: `file ${record.file}` });
    }
  } catch (error) {
    run.errors.push(`${load}: ${message(error)}`);
  } finally {
    servers.forEach((server, i) =>
      server.stats.requests.forEach((r) =>
        record.requests.push({
          server: i + 1,
          at: r.startedAt - t0,
          ms: (r.endedAt ?? Date.now()) - r.startedAt,
          range: r.range ?? 'whole',
          bytes: r.bytesSent,
          cut: r.aborted,
        }),
      ),
    );
    record.elementRequests = elementRequests.map((r) => ({
      ...r,
      at: r.at - t0,
      endedAt: r.endedAt === undefined ? undefined : r.endedAt - t0,
    }));
    for (const step of undo.reverse())
      await Promise.resolve()
        .then(step)
        .catch(() => {});
  }
}

async function runOnce(
  c: Case,
  media: Clip,
  keys: { seconds: number; byte: number }[],
  client: Client,
  actions: Action[],
  rep: number,
): Promise<Run> {
  const run: Run = { caseId: c.id, client: client.name, rep, times: {}, loads: [], errors: [], requests: 0, overFetch: 0 };
  if (actions.some((a) => a !== 'early')) await playLoad(c, media, keys, client, 'main', actions, run);
  if (actions.includes('early')) await playLoad(c, media, keys, client, 'early', actions, run);
  return run;
}

/** Does `range` (`bytes=a-b`, `bytes=a-`) hold `byte`? */
function holds(range: string, byte: number): boolean {
  const m = /bytes=(\d+)-(\d*)/.exec(range);
  if (!m) return range === 'whole';
  return Number(m[1]) <= byte && (m[2] === '' || byte <= Number(m[2]));
}

/** A run's loads as one line per step and request, in time order; requests holding a seek's keyframe are marked. */
function timelineText(run: Run): string {
  const lines: string[] = [];
  for (const load of run.loads) {
    lines.push(`${run.caseId} ${run.client}, run ${run.rep + 1}, ${load.load} load (ms since its servers started):`);
    const events: { at: number; text: string }[] = [];
    for (const s of load.steps) {
      const result = s.ms !== undefined ? `: ${(s.ms / 1000).toFixed(1)} s` : s.error ? `: ${s.error}` : '';
      const target = s.target
        ? ` [${s.target.seconds.toFixed(1)} s: keyframe ${s.target.keyframeSeconds.toFixed(1)} s at byte ${s.target.byte}]`
        : '';
      events.push({ at: s.at, text: `== ${s.name}${target}${result}` });
    }
    const seeks = load.steps.filter((s) => s.target);
    const mark = (at: number, range: string) => {
      const seek = seeks.findLast((s) => s.at <= at + 50 && holds(range, s.target!.byte));
      return seek ? `   ← holds the keyframe of "${seek.name}" (+${at - seek.at} ms after it)` : '';
    };
    for (const r of load.requests)
      events.push({
        at: r.at,
        text: `   s${r.server} ${r.range} → ${r.bytes} B in ${r.ms} ms${r.cut ? ', cut' : ''}${mark(r.at, r.range)}`,
      });
    for (const r of load.elementRequests) events.push({ at: r.at, text: `   el ${elementRequestText(r)}${mark(r.at, r.range)}` });
    events.sort((a, b) => a.at - b.at);
    for (const e of events) lines.push(`  +${String(e.at).padStart(6)} ${e.text}`);
  }
  return lines.join('\n');
}

/**
 * A reference run's time for `action`, or 'after a miss' when an earlier seek of the same load
 * never played: that <video> then had its 20 s time-out to read on, so a later seek starts
 * from more bytes than Stitch had, and is no longer the same case.
 */
function referenceTime(run: Run, action: Action): number | undefined | 'after a miss' {
  const main = SEEKS.map((s) => s.action);
  const at = main.indexOf(action);
  if (at > 0 && main.slice(0, at).some((earlier) => earlier in run.times && run.times[earlier] === undefined)) return 'after a miss';
  return run.times[action];
}

/** The median, undefined (did not play) counting as the longest. */
const median = (xs: (number | undefined)[]): number | undefined => {
  if (xs.length === 0) return undefined;
  const sorted = xs.map((x) => x ?? Infinity).toSorted((a, b) => a - b);
  const mid = sorted.length >> 1;
  const m = sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return Number.isFinite(m) ? m : undefined;
};

/**
 * Issue 26's target for one of Stitch's cells: Chromium within its own <video>'s time + 1 s,
 * Firefox within twice its own time + 1 s, and no seek over 6 s. Undefined: no target to judge by.
 */
function meetsTarget(browser: PlayBrowser, action: Action, stitch: number | undefined, own: number | undefined): boolean | undefined {
  if (stitch === undefined) return false;
  if (action !== 'first' && stitch > SEEK_LIMIT_MS) return false;
  if (own === undefined) return action === 'first' ? undefined : true;
  return stitch <= (browser === 'chromium' ? own : 2 * own) + 1000;
}

/** A table per browser: a row per case, a column per action with `Stitch / own <video>` (s) and ✓/✗. */
function tables(
  cases: Case[],
  clipsByName: Map<string, Clip>,
  runs: Run[],
  clients: Client[],
  actions: Action[],
): { text: string; misses: string[] } {
  const seconds = (ms: number | undefined) => (ms === undefined ? '—' : (ms / 1000).toFixed(1));
  const lines: string[] = [];
  const misses: string[] = [];
  for (const browser of [...new Set(clients.map((c) => c.browser))]) {
    const title = browser === 'chromium' ? 'Chromium (service-worker route)' : 'Firefox (Media Source route)';
    const rule = browser === 'chromium' ? 'own + 1 s' : '2 × own + 1 s';
    lines.push(
      '',
      `${title}: Stitch / the browser's own <video> (s); ✗: over ${rule}, a seek over 6 s, or no playback; ` +
        `*: the <video> missed an earlier seek of that load, so this one is not the same case`,
    );
    const head = ['case', 'clip', ...actions.map((a) => ACTION_TITLES[a]), 'file', 'requests', 'over-fetch'];
    const rows = [head];
    for (const c of cases) {
      const media = clipsByName.get(c.file.name)!;
      const of = (name: string) => runs.filter((r) => r.caseId === c.id && r.client === name);
      const mine = of(`stitch ${browser}`);
      const own = of(`${browser} <video>`);
      const cells = actions.map((action) => {
        const s = median(mine.map((r) => r.times[action]));
        const comparable = own.map((r) => referenceTime(r, action)).filter((t) => t !== 'after a miss');
        const o = median(comparable);
        const afterMiss = own.length > 0 && comparable.length === 0;
        const verdict = mine.length ? meetsTarget(browser, action, s, o) : undefined;
        if (verdict === false) misses.push(`${browser} ${c.id} ${ACTION_TITLES[action]}: ${seconds(s)} s (own ${seconds(o)} s)`);
        const mark = verdict === undefined ? '' : verdict ? ' ✓' : ' ✗';
        return `${mine.length ? seconds(s) : ''}${own.length ? `/${afterMiss ? '*' : seconds(o)}` : ''}${mark}`;
      });
      const files = [...new Set(mine.flatMap((r) => r.loads.map((l) => l.file ?? '-')))].join('/');
      if (mine.some((r) => r.loads.some((l) => l.file !== undefined && l.file !== 'exact')))
        misses.push(`${browser} ${c.id}: file ${files}`);
      const clipText = `${(media.size / 1e6).toFixed(1)} MB ${media.durationSeconds} s`;
      const requests = median(mine.map((r) => r.requests));
      const overFetch = median(mine.map((r) => r.overFetch));
      rows.push([c.id, clipText, ...cells, files, String(requests ?? '—'), overFetch === undefined ? '—' : overFetch.toFixed(2)]);
    }
    const widths = head.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
    for (const row of rows) lines.push('  ' + row.map((cell, i) => cell.padEnd(widths[i]!)).join('  '));
  }
  return { text: lines.join('\n'), misses };
}

async function main(): Promise<void> {
  const { runs: repeats, cases, actions, clients, timeline, list } = options();
  if (list) {
    for (const c of cases) console.log(c.id);
    return;
  }
  const clipsByName = new Map<string, Clip>();
  const keysByName = new Map<string, { seconds: number; byte: number }[]>();
  for (const c of cases) {
    if (clipsByName.has(c.file.name)) continue;
    const started = Date.now();
    const media = await clips.clip(c.file);
    clipsByName.set(c.file.name, media);
    keysByName.set(c.file.name, keyframes(media));
    if (Date.now() - started > 2000) console.error(`made ${media.filename} in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  }
  const started = Date.now();
  const runs: Run[] = [];
  for (let rep = 0; rep < repeats; rep++) {
    for (const c of cases) {
      for (const client of clients) {
        const run = await runOnce(c, clipsByName.get(c.file.name)!, keysByName.get(c.file.name)!, client, actions, rep);
        runs.push(run);
        const times = actions.map((a) => `${a} ${run.times[a] === undefined ? '—' : Math.round(run.times[a])}`).join(', ');
        const files = run.loads.map((l) => l.file).filter(Boolean);
        console.error(
          `[${rep + 1}/${repeats}] ${c.id} ${client.name}: ${times}${files.length ? `, file ${files.join('/')}` : ''}${run.errors.length ? ` (${run.errors.join('; ')})` : ''}`,
        );
        if (timeline && client.stitch) console.error(timelineText(run));
      }
    }
  }
  const { text, misses } = tables(cases, clipsByName, runs, clients, actions);
  console.log(
    `Playback: from opening the page to the first frame, and from each seek until playing there (s, median of ${repeats} run(s); ` +
      `early: a seek to ${EARLY_FRACTION * 100} % as soon as the duration is known, in a second load)`,
  );
  console.log(text);
  console.log(
    misses.length ? `\nMissed issue 26's targets (${misses.length}):\n  ${misses.join('\n  ')}` : "\nEvery cell within issue 26's targets.",
  );
  console.log(`\n${runs.length} runs in ${Math.round((Date.now() - started) / 1000)} s.`);
  const out = new URL('./results/play.json', import.meta.url);
  await mkdir(new URL('./results/', import.meta.url), { recursive: true });
  await writeFile(out, JSON.stringify({ at: new Date().toISOString(), clips: [...clipsByName.values()], cases, actions, runs }, null, 2));
  console.log(`Every run, with its steps and what each server was asked: ${out.pathname}`);
  if (runs.some((r) => r.loads.some((l) => l.file === 'WRONG FILE'))) process.exitCode = 1;
}

await main();
