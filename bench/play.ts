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
import { mkdir, readFile, writeFile } from 'node:fs/promises';
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
  serverRate,
  type ElementRequest,
  type PlayBrowser,
  type ServerSetupId,
} from '../tests/e2e/support/play-case';
import { earlySeekAndTime, firstFrameMs, playedTo, seeksAndTime, type AnyPage } from '../tests/e2e/support/player';
import { startMirror, type Mirror } from '../tests/support/mirror-server';
import * as clips from '../tests/support/clips';
import type { Clip, ClipRecipe } from '../tests/support/clips';
import {
  ACTION_TITLES,
  ACTIONS,
  playbackChart,
  SEEKS,
  tables,
  type Action,
  type Case,
  type Client,
  type Load,
  type PlayResults,
  type Run,
  type Step,
} from './play-report';

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

const EARLY_FRACTION = 0.6;
const BURST_GAP_MS = 300;
const FIRST_FRAME_TIMEOUT_MS = 30_000;
const SEEK_TIMEOUT_MS = 20_000;

function options() {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string', default: '1' },
      only: { type: 'string' },
      all: { type: 'boolean', default: false },
      browsers: { type: 'string', default: 'chromium,firefox' },
      actions: { type: 'string' },
      'no-reference': { type: 'boolean', default: false },
      'media-log': { type: 'boolean', default: false },
      timeline: { type: 'boolean', default: false },
      list: { type: 'boolean', default: false },
      from: { type: 'string' },
      chart: { type: 'string' },
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
  const picked = (c: Case) => !wanted || wanted.some((w) => w === c.id || w === c.file.name || w === c.server);
  const cases = matrix.filter(picked);
  if (cases.length === 0) throw new Error(`--only ${values.only}: no such case (${matrix.map((c) => c.id).join(', ')})`);
  const actions = values.actions ? (values.actions.split(',').map((a) => a.trim()) as Action[]) : [...ACTIONS];
  const unknown = actions.filter((a) => !ACTIONS.includes(a));
  if (unknown.length) throw new Error(`--actions ${unknown.join(',')}: no such action (${ACTIONS.join(', ')})`);
  const browsers = values.browsers.split(',').map((b) => b.trim()) as PlayBrowser[];
  const clients: Client[] = browsers.flatMap((browser) => [
    ...(values['no-reference'] ? [] : [{ name: `${browser} <video>`, browser, stitch: false }]),
    { name: `stitch ${browser}`, browser, stitch: true },
  ]);
  const from = values.from?.split(',').map((f) => f.trim());
  return {
    runs,
    cases,
    picked,
    actions,
    clients,
    timeline: values.timeline,
    mediaLog: values['media-log'],
    list: values.list,
    from,
    chart: values.chart,
  };
}

interface Packet {
  seconds: number;
  byte: number;
  key: boolean;
}

/** The packets of the clip's video (of its audio, in an audio clip), in time order. */
function packets(media: Clip): Packet[] {
  const stream = media.videoKbps > 0 ? 'v:0' : 'a:0';
  const probe = spawnSync(
    'ffprobe',
    ['-v', 'error', '-select_streams', stream, '-show_entries', 'packet=pts_time,pos,flags', '-of', 'csv=p=0', media.path],
    { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 },
  );
  return probe.stdout
    .split('\n')
    .map((line) => line.split(','))
    .filter(([time, pos, flags]) => time && pos && flags)
    .map(([time, pos, flags]) => ({ seconds: Number(time), byte: Number(pos), key: flags!.includes('K') }))
    .sort((a, b) => a.seconds - b.seconds);
}

/** The target of a seek to `fraction`, the last keyframe at or before it, and where the target's own bytes begin. */
function seekTarget(media: Clip, all: Packet[], fraction: number): NonNullable<Step['target']> {
  const seconds = media.durationSeconds * fraction;
  const key = all.findLast((p) => p.key && p.seconds <= seconds) ?? all.find((p) => p.key)!;
  const after = all.filter((p) => p.seconds >= seconds).map((p) => p.byte);
  return { seconds, keyframeSeconds: key.seconds, byte: key.byte, targetByte: after.length ? Math.min(...after) : media.size };
}

/**
 * The least any player needs for each seek of the default actions: the bytes from the target's
 * keyframe to the target at the servers' rate in all, before any round trip, index or buffering.
 */
function seekFloors(results: PlayResults, packetsOf: (media: Clip) => Packet[]): string[] {
  const lines: string[] = [];
  for (const c of results.cases) {
    const media = results.clips.find((m) => m.name === c.file.name)!;
    const setup = SERVER_SETUPS[c.server];
    const rate = serverRate(media, setup) * setup.count;
    const all = packetsOf(media);
    const seeks = [
      ...SEEKS.map((s) => ({ action: s.action, fraction: s.fractions.at(-1)! })),
      { action: 'early' as const, fraction: EARLY_FRACTION },
    ];
    const cells = seeks
      .filter((s) => results.actions.includes(s.action))
      .map(({ action, fraction }) => {
        const target = seekTarget(media, all, fraction);
        return `${ACTION_TITLES[action]} ${((target.targetByte - target.byte) / rate).toFixed(1)}`;
      });
    lines.push(`  ${c.id}: ${cells.join(', ')}`);
  }
  return lines;
}

const message = (error: unknown) => (error instanceof Error ? error.message.split('\n')[0]! : String(error));

/** One case played by one client: the clip, its packets (where the seeks' keyframes are), what to do. */
interface Play {
  c: Case;
  media: Clip;
  all: Packet[];
  client: Client;
  actions: Action[];
  /** Chromium: add the element's media pipeline events to the timeline. */
  mediaLog: boolean;
}

/** Plays one load of a case in one client, on fresh servers; adds what it measured to `run`. */
async function playLoad({ c, media, all, client, actions, mediaLog }: Play, load: Load['load'], run: Run): Promise<void> {
  const undo: (() => unknown)[] = [];
  const cleanup: Cleanup = (step) => undo.push(step);
  const record: Load = { load, steps: [], requests: [], elementRequests: [] };
  run.loads.push(record);
  const t0 = Date.now();
  const monotonicAtStart = monotonicMs();
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
    if (mediaLog && client.browser === 'chromium') await followMediaEvents(page as PlaywrightPage, record, monotonicAtStart);

    if (load === 'early') {
      const target = seekTarget(media, all, EARLY_FRACTION);
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
          const target = seekTarget(media, all, fractions.at(-1)!);
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

async function runOnce(play: Play, rep: number): Promise<Run> {
  const run: Run = { caseId: play.c.id, client: play.client.name, rep, times: {}, loads: [], errors: [], requests: 0, overFetch: 0 };
  if (play.actions.some((a) => a !== 'early')) await playLoad(play, 'main', run);
  if (play.actions.includes('early')) await playLoad(play, 'early', run);
  return run;
}

/** Chrome's media clock (base::TimeTicks) is CLOCK_MONOTONIC on Linux, as is process.hrtime. */
function monotonicMs(): number {
  return Number(process.hrtime.bigint() / 1000n) / 1000;
}

/**
 * Adds the element's media pipeline events (Chrome's media-internals: seeks, pipeline states,
 * buffering) to the load's steps, at the time Chrome logged them: they show whether a seek's wait
 * was the pipeline's (kSeeking until kPlaying) or the bytes'.
 */
async function followMediaEvents(page: PlaywrightPage, record: Load, monotonicAtStart: number): Promise<void> {
  const cdp = await page.context().newCDPSession(page);
  cdp.on('Media.playerEventsAdded', ({ events }) => {
    for (const { timestamp, value } of events) {
      const { event, ...details } = JSON.parse(value) as { event: string } & Record<string, unknown>;
      const text = Object.entries(details).map(([k, v]) => `${k}=${JSON.stringify(v)}`);
      record.steps.push({ at: Math.round(timestamp * 1000 - monotonicAtStart), name: `chrome ${event} ${text.join(' ')}`.trim() });
    }
  });
  await cdp.send('Media.enable');
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

/** Plays every case in every client `repeats` times, printing each run as it ends. */
async function play({ runs: repeats, cases, actions, clients, timeline, mediaLog }: ReturnType<typeof options>): Promise<PlayResults> {
  const clipsByName = new Map<string, Clip>();
  const packetsByName = new Map<string, Packet[]>();
  for (const c of cases) {
    if (clipsByName.has(c.file.name)) continue;
    const started = Date.now();
    const media = await clips.clip(c.file);
    clipsByName.set(c.file.name, media);
    packetsByName.set(c.file.name, packets(media));
    if (Date.now() - started > 2000) console.error(`made ${media.filename} in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  }
  const started = Date.now();
  const runs: Run[] = [];
  const results: PlayResults = { at: new Date().toISOString(), clips: [...clipsByName.values()], cases, actions, runs };
  const out = new URL('./results/play.json', import.meta.url);
  await mkdir(new URL('./results/', import.meta.url), { recursive: true });
  for (let rep = 0; rep < repeats; rep++) {
    for (const c of cases) {
      for (const client of clients) {
        const run = await runOnce(
          { c, media: clipsByName.get(c.file.name)!, all: packetsByName.get(c.file.name)!, client, actions, mediaLog },
          rep,
        );
        runs.push(run);
        const times = actions.map((a) => `${a} ${run.times[a] === undefined ? '—' : Math.round(run.times[a])}`).join(', ');
        const files = run.loads.map((l) => l.file).filter(Boolean);
        console.error(
          `[${rep + 1}/${repeats}] ${c.id} ${client.name}: ${times}${files.length ? `, file ${files.join('/')}` : ''}${run.errors.length ? ` (${run.errors.join('; ')})` : ''}`,
        );
        if (timeline) console.error(timelineText(run));
        // After every run: a run stopped early can still be reported (`--from`).
        await writeFile(out, JSON.stringify(results, null, 2));
      }
    }
  }
  console.error(`${runs.length} runs in ${Math.round((Date.now() - started) / 1000)} s.`);
  console.error(`Every run, with its steps and what each server was asked: ${out.pathname}`);
  return results;
}

/** Saved results (bench/results/play.json of several runs, say one per browser) as one, of the `picked` cases. */
async function savedResults(files: string[], picked: (c: Case) => boolean): Promise<PlayResults> {
  const saved = await Promise.all(files.map(async (f) => JSON.parse(await readFile(f, 'utf8')) as PlayResults));
  const byKey = <T>(items: T[], key: (item: T) => string) => [...new Map(items.map((i) => [key(i), i])).values()];
  const actions = new Set(saved.flatMap((r) => r.actions));
  const cases = byKey(
    saved.flatMap((r) => r.cases),
    (c) => c.id,
  ).filter(picked);
  const ids = new Set(cases.map((c) => c.id));
  return {
    at: saved
      .map((r) => r.at)
      .toSorted()
      .at(-1)!,
    clips: byKey(
      saved.flatMap((r) => r.clips),
      (c) => c.name,
    ),
    cases,
    actions: ACTIONS.filter((a) => actions.has(a)),
    runs: saved.flatMap((r) => r.runs).filter((r) => ids.has(r.caseId)),
  };
}

/** The clients that played in `results`, each browser's own <video> before Stitch. */
function clientsOf(results: PlayResults): Client[] {
  const names = new Set(results.runs.map((r) => r.client));
  return (['chromium', 'firefox'] as const).flatMap((browser) =>
    [
      { name: `${browser} <video>`, browser, stitch: false },
      { name: `stitch ${browser}`, browser, stitch: true },
    ].filter((c) => names.has(c.name)),
  );
}

async function main(): Promise<void> {
  const chosen = options();
  if (chosen.list) {
    for (const c of chosen.cases) console.log(c.id);
    return;
  }
  const results = chosen.from ? await savedResults(chosen.from, chosen.picked) : await play(chosen);
  if (chosen.from && chosen.timeline) for (const run of results.runs) console.error(timelineText(run));
  const clients = chosen.from ? clientsOf(results) : chosen.clients;
  // Runs per case and client: a run stopped early (reported with --from) leaves some cells with fewer.
  const perCell = new Map<string, number>();
  for (const r of results.runs) perCell.set(`${r.caseId} ${r.client}`, (perCell.get(`${r.caseId} ${r.client}`) ?? 0) + 1);
  const counts = [...perCell.values()];
  const [fewest, most] = [Math.min(...counts), Math.max(...counts)];
  const repeats = fewest === most ? String(most) : `${fewest}–${most}`;
  const { text, misses } = tables(results, clients);
  console.log(
    `Playback: from opening the page to the first frame, and from each seek until playing there (s, median of ${repeats} run(s); ` +
      `early: a seek to ${EARLY_FRACTION * 100} % as soon as the duration is known, in a second load)`,
  );
  console.log(text);
  console.log(
    misses.length ? `\nMissed issue 26's targets (${misses.length}):\n  ${misses.join('\n  ')}` : "\nEvery cell within issue 26's targets.",
  );
  console.log(
    "\nEach seek's floor (s): the bytes from the target's keyframe to the target at the servers' rate in all, " +
      'before any round trip, index or buffering; no player plays sooner:',
  );
  const probed = new Map<string, Packet[]>();
  const packetsOf = (media: Clip) => probed.get(media.name) ?? probed.set(media.name, packets(media)).get(media.name)!;
  console.log(seekFloors(results, packetsOf).join('\n'));
  if (chosen.chart) {
    const subtitle = `medians of ${repeats} run(s) per cell, ${results.at.slice(0, 10)}; every saved file checked against its SHA-256`;
    await writeFile(chosen.chart, playbackChart(results, clients, subtitle));
    console.log(`\nwrote ${chosen.chart}`);
  }
  if (results.runs.some((r) => r.loads.some((l) => l.file === 'WRONG FILE'))) process.exitCode = 1;
}

await main();
