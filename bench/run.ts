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
import { allClients, curlClient, measure, stitchCapabilities, stitchClient, type Client } from './clients';
import { chart, summarize, table, type Outcome, type Run } from './report';
import { DEFAULT_CLIENTS, everyRealMs, SCENARIOS, SEED, startMirrors, type Scenario } from './scenarios';

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

/** Generous: a client that needs more than 20× the nominal time (or a minute) did not finish. */
function timeoutMs(scenario: Scenario, size: number): number {
  const nominal = size / scenario.mirrors.reduce((total, m) => total + m.rate, 0);
  return Math.max(60, 20 * nominal) * 1000;
}

async function runOnce(scenario: Scenario, client: Client, size: number, expected: string, rep: number, slowStart: boolean): Promise<Run> {
  const mirrors = await startMirrors(scenario, size, slowStart);
  const dir = await mkdtemp(join(tmpdir(), 'stitch-bench-'));
  try {
    const output = join(dir, 'file.bin');
    const statsFile = join(dir, 'stats.json');
    let stop = () => {};
    // On a timeout: whether the mirrors were still sending (a server stuck) or idle (a client stuck).
    let stuck: string[] = [];
    const openRequests = () => {
      const open = mirrors.flatMap((m, i) =>
        m.stats.requests
          .filter((r) => r.endedAt === undefined)
          .map((r) => `mirror ${i + 1} ${r.range ?? 'whole file'}: ${r.bytesSent} B sent, still open`),
      );
      stuck = open.length > 0 ? open : ['no request open on any mirror'];
    };
    const command = client.command(
      mirrors.map((m) => m.url),
      output,
      statsFile,
    );
    const measured = await measure(
      command,
      dir,
      timeoutMs(scenario, size),
      () => (stop = scenario.during?.(mirrors, size, everyRealMs) ?? stop),
      openRequests,
    );
    stop();
    await Promise.all(mirrors.map((m) => m.close()));
    const perMirror = mirrors.map((m) => ({
      bytes: m.stats.bytesSent,
      requests: m.stats.requests.length,
      peakConnections: m.stats.peakConnections,
      refused: m.stats.requests.filter((r) => r.status === 503 || r.status === 429).length,
    }));
    let outcome: Outcome;
    if (measured.timedOut) outcome = 'timeout';
    else if (measured.code !== 0) outcome = 'failed';
    else outcome = (await fileSha256(output)) === expected ? 'exact' : 'wrong';
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
      connections: mirrors.reduce((total, m) => total + m.stats.connections, 0),
      mirrors: perMirror,
      stitchStats: await client.readStats?.(statsFile),
      message: outcome === 'exact' ? undefined : [measured.outputTail, ...stuck].filter(Boolean).join('\n') || undefined,
    };
  } finally {
    await Promise.all(mirrors.map((m) => m.close()));
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
  const sizeOf = (s: Scenario) => Math.max(1, Math.round(s.size * scale));
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
    const expected = await contentSha256(SEED, size);
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
