#!/usr/bin/env node
// The whole test suite, as CI runs it: system packages, type check, build, lint beside the unit tests,
// the integration tests, the Firefox lint, then the browser end-to-end tests. Ends with one "N passed, N failed"
// line summed over every Vitest run.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';

const reports = '.tmp/test-reports';
rmSync(reports, { recursive: true, force: true });
mkdirSync(reports, { recursive: true });
const json = (name) => ['--reporter=default', '--reporter=json', `--outputFile=${reports}/${name}.json`];

function step(title, command, args) {
  const started = Date.now();
  console.log(`\n== ${title}`);
  const result = spawnSync(command, args, { stdio: 'inherit' });
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  if (result.status !== 0) {
    console.error(`== ${title}: FAILED after ${seconds} s`);
    summary();
    process.exit(result.status ?? 1);
  }
  console.log(`== ${title}: ok in ${seconds} s`);
}

/**
 * Starts a step beside the next ones, its output kept until `finish` prints it: lint is one core's
 * work for a minute, beside the unit tests (one file at a time: a core each).
 */
function begin(title, command, args) {
  const started = Date.now();
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const output = [];
  child.stdout.on('data', (chunk) => output.push(chunk));
  child.stderr.on('data', (chunk) => output.push(chunk));
  const status = new Promise((resolve) => child.on('close', (code) => resolve(code)));
  return { title, started, output, status };
}

async function finish({ title, started, output, status }) {
  const code = await status;
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  console.log(`\n== ${title} (beside the steps above)`);
  process.stdout.write(Buffer.concat(output));
  if (code !== 0) {
    console.error(`== ${title}: FAILED after ${seconds} s`);
    summary();
    process.exit(code ?? 1);
  }
  console.log(`== ${title}: ok in ${seconds} s`);
}

function summary() {
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  for (const name of ['unit', 'integration', 'e2e']) {
    const file = `${reports}/${name}.json`;
    if (!existsSync(file)) continue;
    const report = JSON.parse(readFileSync(file, 'utf8'));
    passed += report.numPassedTests;
    failed += report.numFailedTests;
    skipped += report.numPendingTests + (report.numTodoTests ?? 0);
  }
  console.log(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
}

step('system packages (Chromium, Firefox ESR)', 'bash', ['scripts/install-system-deps.sh', 'test']);
step('type check', 'npx', ['tsc', '--noEmit']);
// A cached type-aware verdict can be stale when another file's types changed: the full suite lints from scratch.
rmSync('node_modules/.cache/eslint', { recursive: true, force: true });
step('build', 'npm', ['run', 'build']);
const lint = begin('lint (ESLint, Prettier)', 'npm', ['run', 'lint']);
step('unit tests', 'npx', ['vitest', 'run', '--project', 'unit', ...json('unit')]);
await finish(lint);
// Alone: they run on the real clock (vitest.config.ts).
step('integration tests', 'npx', ['vitest', 'run', '--project', 'integration', ...json('integration')]);
step('lint:firefox', 'npm', ['run', 'lint:firefox']);
step('end-to-end tests (Chromium, Firefox ESR)', 'npm', ['run', 'test:e2e', '--', ...json('e2e')]);
summary();
