/**
 * `npm run bench [-- --runs N --only 1,6,a --size-scale 0.25]`: every scenario N times for each of its
 * clients, each run on freshly started mirrors, the client in its own process. Prints the table,
 * writes bench/results/latest.json and docs/bench.svg. See bench/README.md.
 */
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { createReadStream, existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { contentSha256 } from '../tests/support/content';
import type { MirrorStats } from '../tests/support/mirror-server';
import type { StreamServer } from '../tests/support/stream-server';
import { expectedBytes, probedSeconds, stream, type MadeStream, type StreamRecipe } from '../tests/support/streams';
import { allClients, curlClient, measure, stitchCapabilities, stitchClient, type Client } from './clients';
import { chart, summarize, table, type Outcome, type Run } from './report';
import { DEFAULT_CLIENTS, everyRealMs, SCENARIOS, SEED, startMirrors, startStreamHosts, type Scenario } from './scenarios';

const root = new URL('..', import.meta.url);

function options() {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string', default: '3' },
      only: { type: 'string' },
      'size-scale': { type: 'string', default: '1' },
      // To measure what slow start costs: the same scenarios without it.
      'no-slow-start': { type: 'boolean', default: false },
      // Another build of the CLI (a launcher, or a bundle such as a copy of dist/cli/stitch.cjs), run as
      // `stitch-base` wherever stitch runs.
      'baseline-cli': { type: 'string' },
      // Only these clients (by name), e.g. `stitch,stitch-base` to compare two builds quickly.
      clients: { type: 'string' },
    },
  });
  const runs = Number(values.runs);
  const scale = Number(values['size-scale']);
  if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs needs a positive integer, not ${values.runs}`);
  if (!(scale > 0)) throw new Error(`--size-scale needs a positive number, not ${values['size-scale']}`);
  const wanted = values.only?.split(',').map((id) => id.trim());
  // A scenario measured against a baseline brings its baseline along.
  const named = (id: string) => SCENARIOS.filter((s) => s.id === id || s.group === id);
  const ids = new Set(wanted?.flatMap((id) => named(id).flatMap((s) => [s.id, ...(s.baseline ? [s.baseline] : [])])));
  const scenarios = wanted ? SCENARIOS.filter((s) => ids.has(s.id)) : SCENARIOS;
  if (scenarios.length === 0) throw new Error(`--only ${values.only}: no such scenario (${SCENARIOS.map((s) => s.id).join(', ')})`);
  const only = values.clients?.split(',').map((name) => name.trim());
  return { runs, scale, scenarios, slowStart: !values['no-slow-start'], baseline: values['baseline-cli'], only };
}

async function fileSha256(path: string): Promise<string | undefined> {
  if (!existsSync(path)) return undefined;
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** What a run's file must be: its SHA-256, and of a stream, the stream (its file must play for its length). */
interface Expected {
  sha256: string;
  stream?: MadeStream;
}

/** A stream scenario's file: the stream (made by ffmpeg the first time, then kept in .tmp/streams/), its best variant joined. */
async function streamFile(recipe: StreamRecipe): Promise<Expected & { size: number }> {
  const made = await stream(recipe);
  // The recipes list their variants from the lowest: the last is the one a client picks.
  const bytes = expectedBytes(made, recipe.variants.length - 1);
  return { sha256: createHash('sha256').update(bytes).digest('hex'), stream: made, size: bytes.length };
}

/** What runOnce reads of a server: a mirror's stats, or the same counted from a stream host's requests. */
type ServerStats = Pick<MirrorStats, 'bytesSent' | 'connections' | 'peakConnections'> & {
  requests: { range: string | undefined; status: number; bytesSent: number; endedAt: number | undefined }[];
};

/** The servers of one run: a scenario's mirrors, or a stream's hosts behind the gateway's playlist. */
interface Served {
  /** What `client` is given: every mirror's URL; of a stream, the gateway's master playlist, or one host's. */
  urls(client: Client): string[];
  stats(): ServerStats[];
  /** Starts the scenario's actions on its servers (once the client has started); returns what stops them. */
  during(): () => void;
  close(): Promise<void>;
}

const streamStats = (host: StreamServer): ServerStats => ({
  bytesSent: host.requests.reduce((total, r) => total + r.bytesSent, 0),
  connections: host.connections,
  peakConnections: host.peakConnections,
  requests: host.requests,
});

async function serve(scenario: Scenario, size: number, expected: Expected, slowStart: boolean): Promise<Served> {
  if (expected.stream) {
    // The stream hosts emulate no slow start (tests/support/stream-server.ts).
    const hosts = await startStreamHosts(scenario, expected.stream);
    return {
      urls: (client) => [client.oneHost ? hosts.oneHostUrl : hosts.url],
      stats: () => hosts.hosts.map(streamStats),
      during: () => () => {},
      close: () => hosts.close(),
    };
  }
  const mirrors = await startMirrors(scenario, size, slowStart);
  return {
    urls: () => mirrors.map((m) => m.url),
    stats: () => mirrors.map((m) => m.stats),
    during: () => scenario.during?.(mirrors, size, everyRealMs) ?? (() => {}),
    close: async () => {
      await Promise.all(mirrors.map((m) => m.close()));
    },
  };
}

/** Whether the client's file is the one asked for; a stream's must also play for the stream's length (±1 %). */
async function outcomeOf(output: string, expected: Expected, client: Client): Promise<{ outcome: Outcome; why?: string }> {
  if (expected.stream) {
    const seconds = probedSeconds(output);
    const wanted = expected.stream.durationSeconds;
    if (!(Math.abs(seconds - wanted) <= wanted / 100)) return { outcome: 'wrong', why: `ffprobe reads ${seconds} s, not ${wanted} s` };
    if (client.remuxes) return { outcome: 'playable' };
  }
  return (await fileSha256(output)) === expected.sha256 ? { outcome: 'exact' } : { outcome: 'wrong', why: 'other bytes (SHA-256)' };
}

/** Generous: a client that needs more than 20× the nominal time (or a minute) did not finish. */
function timeoutMs(scenario: Scenario, size: number): number {
  const nominal = size / scenario.mirrors.reduce((total, m) => total + m.rate, 0);
  return Math.max(60, 20 * nominal) * 1000;
}

async function runOnce(
  scenario: Scenario,
  client: Client,
  size: number,
  expected: Expected,
  rep: number,
  slowStart: boolean,
): Promise<Run> {
  const served = await serve(scenario, size, expected, slowStart);
  const dir = await mkdtemp(join(tmpdir(), 'stitch-bench-'));
  try {
    const output = join(dir, 'file.bin');
    const statsFile = join(dir, 'stats.json');
    let stop = () => {};
    // On a timeout: whether the mirrors were still sending (a server stuck) or idle (a client stuck).
    let stuck: string[] = [];
    const openRequests = () => {
      const open = served
        .stats()
        .flatMap((stats, i) =>
          stats.requests
            .filter((r) => r.endedAt === undefined)
            .map((r) => `mirror ${i + 1} ${r.range ?? 'whole file'}: ${r.bytesSent} B sent, still open`),
        );
      stuck = open.length > 0 ? open : ['no request open on any mirror'];
    };
    const command = client.command(served.urls(client), output, statsFile);
    const measured = await measure(command, dir, timeoutMs(scenario, size), () => (stop = served.during()), openRequests);
    stop();
    await served.close();
    const stats = served.stats();
    const perMirror = stats.map((m) => ({
      bytes: m.bytesSent,
      requests: m.requests.length,
      peakConnections: m.peakConnections,
      refused: m.requests.filter((r) => r.status === 503 || r.status === 429).length,
    }));
    let outcome: Outcome;
    let why: string | undefined;
    if (measured.timedOut) outcome = 'timeout';
    else if (measured.code !== 0) outcome = 'failed';
    else ({ outcome, why } = await outcomeOf(output, expected, client));
    return {
      scenario: scenario.id,
      client: client.name,
      rep,
      size,
      outcome,
      seconds: measured.seconds,
      code: measured.code,
      signal: measured.signal,
      peakRssBytes: measured.peakRssBytes,
      overFetch: perMirror.reduce((total, m) => total + m.bytes, 0) / size,
      requests: perMirror.reduce((total, m) => total + m.requests, 0),
      connections: stats.reduce((total, m) => total + m.connections, 0),
      mirrors: perMirror,
      stitchStats: await client.readStats?.(statsFile),
      message:
        outcome === 'exact' || outcome === 'playable'
          ? undefined
          : [why, measured.outputTail, ...stuck].filter(Boolean).join('\n') || undefined,
    };
  } finally {
    await served.close();
    await rm(dir, { recursive: true, force: true });
  }
}

function describeRun(run: Run): string {
  const rss = run.peakRssBytes === undefined ? '?' : `${Math.round(run.peakRssBytes / 2 ** 20)} MiB`;
  const flag = run.outcome === 'wrong' ? '  <<< WRONG FILE >>>' : run.outcome === 'exact' ? '' : `  (${run.outcome})`;
  const dropped = run.stitchStats?.mirrors.filter((m) => m.dropped).map((m) => `dropped ${m.url}: ${m.dropped}`) ?? [];
  const why = run.message && run.outcome !== 'exact' ? `\n      ${run.message.split('\n').slice(-3).join('\n      ')}` : '';
  const refused = run.mirrors.reduce((total, m) => total + m.refused, 0);
  const conns = `${run.mirrors.map((m) => m.peakConnections).join('/')} conn${refused ? ` (${refused} × 503/429)` : ''}`;
  return `  ${run.scenario.padEnd(3)} #${run.rep} ${run.client.padEnd(10)} ${run.seconds.toFixed(2).padStart(7)} s  over-fetch ${run.overFetch.toFixed(3)}  ${String(run.requests).padStart(4)} req  ${conns}  ${rss}${flag}${dropped.map((d) => `\n      ${d}`).join('')}${why}`;
}

async function main(): Promise<void> {
  const { runs, scale, scenarios, slowStart, baseline, only } = options();
  const aria2 = spawnSync('aria2c', ['--version'], { encoding: 'utf8' });
  if (aria2.status !== 0) throw new Error('aria2c is missing: run `bash scripts/install-system-deps.sh bench` (npm run bench does)');
  const capabilities = stitchCapabilities();
  // Every client, curl too for the line-speed scenarios; each scenario names its own.
  const curl = curlClient();
  const base = baseline ? stitchClient(capabilities, resolve(baseline), 'stitch-base') : undefined;
  const [stitch, ...others] = allClients();
  const everyClient = [stitch!, ...(base ? [base] : []), ...others, curl].filter((c) => !only || only.includes(c.name));
  if (everyClient.length === 0) throw new Error(`--clients ${only?.join(',')}: no such client`);
  const clientsOf = (s: Scenario) =>
    everyClient.filter(
      (c) =>
        (s.clients ?? DEFAULT_CLIENTS).includes(c.name) ||
        (s.withCurl === true && c === curl) ||
        (c === base && s.clients?.includes('stitch') !== false),
    );
  const clients = everyClient.filter((c) => scenarios.some((s) => clientsOf(s).includes(c)));
  const streams = new Map<string, Expected & { size: number }>();
  for (const s of scenarios) {
    if (!s.stream) continue;
    console.log(`${s.id}: the stream ${s.stream.name} (made by ffmpeg the first time, minutes on 2 cores; kept in .tmp/streams/)`);
    streams.set(s.id, await streamFile(s.stream));
  }
  const sizeOf = (s: Scenario) => streams.get(s.id)?.size ?? Math.max(1, Math.round(s.size * scale));
  console.log(
    `stitch bench: ${runs} run(s) × ${scenarios.length} scenarios × ${clients.length} clients, size × ${scale}${slowStart ? '' : ', no slow start'}`,
  );
  for (const c of clients) console.log(`  ${c.name.padEnd(10)} ${c.description}`);
  const withCurl = scenarios.filter((s) => s.withCurl).map((s) => s.id);
  if (withCurl.length > 0) console.log(`  ${curl.name.padEnd(10)} ${curl.description}; in ${withCurl.join(', ')}`);

  const started = Date.now();
  const all: Run[] = [];
  for (const scenario of scenarios) {
    const size = sizeOf(scenario);
    const expected = streams.get(scenario.id) ?? { sha256: await contentSha256(SEED, size) };
    console.log(`\n${scenario.id}. ${scenario.title}`);
    // Clients take turns within each repetition, so drift on the machine hits them alike, and the
    // turns rotate: the first of a round ran up to 19 % slower on uncapped 1 GiB (the same build twice).
    for (let rep = 1; rep <= runs; rep++) {
      const turns = clientsOf(scenario);
      const shift = (rep - 1) % turns.length;
      for (const client of [...turns.slice(shift), ...turns.slice(0, shift)]) {
        const run = await runOnce(scenario, client, size, expected, rep, slowStart);
        console.log(describeRun(run));
        all.push(run);
      }
    }
  }

  const names = clients.map((c) => c.name);
  const summaries = summarize(scenarios, names, all, sizeOf);
  console.log(`\n== results (${runs} run(s) each; median (min–max); time ÷ = Stitch's median time ÷ that client's)`);
  console.log(table(scenarios, summaries, sizeOf));
  const wrong = all.filter((r) => r.outcome === 'wrong');
  for (const r of wrong) console.log(`\n!!! ${r.client} saved a WRONG FILE in scenario ${r.scenario} (run ${r.rep})`);

  const minutes = ((Date.now() - started) / 60_000).toFixed(1);
  const machine = { cpus: cpus().length, cpu: cpus()[0]?.model, node: process.version, aria2: aria2.stdout.split('\n')[0] };
  const subtitle = `${runs} run(s) · ${machine.cpus} cores · ${machine.aria2} · ${new Date().toISOString().slice(0, 10)}${capabilities.mirror ? '' : ' · Stitch on the first URL only (no --mirror yet)'}`;
  await mkdir(new URL('bench/results/', root), { recursive: true });
  await mkdir(new URL('docs/', root), { recursive: true });
  const results = {
    date: new Date().toISOString(),
    minutes: Number(minutes),
    machine,
    options: { runs, sizeScale: scale, slowStart },
    stitchCapabilities: capabilities,
    clients: clients.map((c) => ({ name: c.name, description: c.description })),
    scenarios: scenarios.map((s) => ({ id: s.id, title: s.title, size: sizeOf(s), optimum: s.optimumNote, target: s.target })),
    summaries,
    runs: all,
  };
  await writeFile(new URL('bench/results/latest.json', root), `${JSON.stringify(results, null, 2)}\n`);
  await writeFile(new URL('docs/bench.svg', root), chart(scenarios, names, summaries, subtitle));
  console.log(`\nwrote bench/results/latest.json and docs/bench.svg in ${minutes} min`);
}

main().catch((error: unknown) => {
  console.error(`bench: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
