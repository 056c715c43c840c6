#!/usr/bin/env node
// How many tests wait on the wall clock (issue 29): per project (unit, integration, e2e), the test files and the
// test cases in files that wait on real time, in files that run in virtual time, and in the rest.
//
//   node tools/real-time-tests.mjs [root] [--list]
//
// `root` is the checkout to scan (default: the current directory); --list also names each file with its class and
// what put it there. Plain Node, no dependencies, and purely textual: nothing is parsed or run.
//
// The criterion, on each tests/{unit,integration,e2e}/**/*.test.ts with its comments and the text of its '…' and
// "…" strings blanked out (so that a test name or a linted snippet saying "setTimeout(" does not count):
// - real: the file calls setTimeout( / setInterval( / sleep( / delay( (sleep(clock, …) excepted: the engine's sleep
//   on an injected clock), any waitFor… (vi.waitFor, a helper's waitForFile, page.waitForEvent, waitForTimeout…),
//   or expect.poll; or it starts a test server (startMirror / startHostile) with a timing option (rate:,
//   connectionRate:, latencyMs:, rttMs:, resetAfterMs:, a TokenBucket, drip(). A file that mixes fake timers with
//   one of these still counts as real.
// - virtual: none of that, and the file uses fake timers (vi.useFakeTimers) or the project's fake clock
//   (tests/support/fake-clock.ts, FakeClock), or the simulated network (tests/support/sim-network.ts,
//   tests/unit/loop/sim-download.ts), which runs on it.
// - other: neither (no timers at all, or only ones hidden in helpers whose names say nothing of waiting).
// A case is an it( / test( call, with its modifiers (it.each(…)(…), test.skipIf(…)(…)) counted once.
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

const args = process.argv.slice(2);
const list = args.includes('--list');
const root = resolve(args.find((arg) => !arg.startsWith('--')) ?? '.');
const projects = ['unit', 'integration', 'e2e'];

const REAL_WAITS = [
  ['setTimeout', /(?<![\w$.])setTimeout\s*\(|\.setTimeout\s*\(/],
  ['setInterval', /(?<![\w$.])setInterval\s*\(|\.setInterval\s*\(/],
  ['sleep', /(?<![\w$])sleep\s*\((?!\s*[\w.]*clock\b)/],
  ['delay', /(?<![\w$])delay\s*\(/],
  ['waitFor', /\bwaitFor\w*\s*\(/],
  ['expect.poll', /\bexpect\s*\.\s*poll\s*\(/],
];
const SERVER = /\b(?:startMirror|startHostile)\s*\(/;
const TIMING_OPTIONS = /\b(?:rate|connectionRate|latencyMs|rttMs|resetAfterMs)\s*:|\bnew\s+TokenBucket\s*\(|\bdrip\s*\(/;
const VIRTUAL = [
  ['vi.useFakeTimers', /\bvi\s*\.\s*useFakeTimers\s*\(/],
  ['FakeClock', /\bFakeClock\b/],
];
const CASE = /(?<![\w$.])(?:it|test)(?:\s*\.\s*\w+(?:\s*\([^()]*\))?)*\s*\(/g;

/** The source with its comments blanked and the text inside its '…' and "…" strings removed (template literals stay). */
function code(source) {
  let out = '';
  for (let i = 0; i < source.length;) {
    const c = source[i];
    const next = source[i + 1];
    if (c === '/' && next === '/') {
      while (i < source.length && source[i] !== '\n') i++;
    } else if (c === '/' && next === '*') {
      const end = source.indexOf('*/', i + 2);
      const stop = end === -1 ? source.length : end + 2;
      out += source.slice(i, stop).replace(/[^\n]/g, ' ');
      i = stop;
    } else if (c === "'" || c === '"') {
      out += c;
      i++;
      while (i < source.length && source[i] !== c && source[i] !== '\n') i += source[i] === '\\' ? 2 : 1;
      if (i < source.length) out += source[i++];
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

function testFiles(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.test.ts') && !name.split(/[\\/]/).includes('node_modules'))
    .map((name) => join(dir, name))
    .sort();
}

function classify(file) {
  const raw = readFileSync(file, 'utf8');
  const text = code(raw);
  const cases = [...text.matchAll(CASE)].length;
  const real = REAL_WAITS.filter(([, pattern]) => pattern.test(text)).map(([name]) => name);
  if (SERVER.test(text) && TIMING_OPTIONS.test(text)) real.push('timed server');
  if (real.length > 0) return { kind: 'real', cases, why: real };
  const virtual = VIRTUAL.filter(([, pattern]) => pattern.test(text)).map(([name]) => name);
  if (/\/fake-clock(?:\.ts)?['"]/.test(raw) && !virtual.includes('FakeClock')) virtual.push('fake-clock');
  // The simulated network's tests reach the fake clock through their helper.
  if (/\/sim-(?:download|network)(?:\.ts)?['"]/.test(raw)) virtual.push('sim-network');
  if (virtual.length > 0) return { kind: 'virtual', cases, why: virtual };
  return { kind: 'other', cases, why: [] };
}

const kinds = ['real', 'virtual', 'other'];
const rows = [];
for (const project of projects) {
  const counts = Object.fromEntries([...kinds, 'all'].map((kind) => [kind, { files: 0, cases: 0 }]));
  for (const file of testFiles(join(root, 'tests', project))) {
    const { kind, cases, why } = classify(file);
    for (const key of [kind, 'all']) {
      counts[key].files++;
      counts[key].cases += cases;
    }
    if (list) console.log(`${kind.padEnd(7)} ${String(cases).padStart(4)}  ${relative(root, file)}  ${why.join(', ')}`);
  }
  rows.push([project, counts]);
}
if (list) console.log('');

const cell = (counts, what) => kinds.map((kind) => counts[kind][what]).join(' / ') + ` of ${counts.all[what]}`;
console.log('project       files: real / virtual / other of all   cases: real / virtual / other of all');
for (const [project, counts] of rows) {
  console.log(`${project.padEnd(13)} ${cell(counts, 'files').padEnd(34)} ${cell(counts, 'cases')}`);
}
