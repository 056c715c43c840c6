#!/usr/bin/env node
// The whole test suite, as CI runs it: system packages, build, unit + integration tests, then
// the browser end-to-end tests and the Firefox lint when those scripts exist.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const scripts = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).scripts;

function step(title, command, args) {
  const started = Date.now();
  console.log(`\n== ${title}`);
  const result = spawnSync(command, args, { stdio: 'inherit' });
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  if (result.status !== 0) {
    console.error(`== ${title}: FAILED after ${seconds} s`);
    process.exit(result.status ?? 1);
  }
  console.log(`== ${title}: ok in ${seconds} s`);
}

step('system packages (Chromium, Firefox ESR)', 'bash', ['scripts/install-system-deps.sh', 'test']);
step('type check', 'npx', ['tsc', '--noEmit']);
step('build', 'npm', ['run', 'build']);
step('unit and integration tests', 'npx', ['vitest', 'run']);
for (const name of ['lint:firefox', 'test:e2e']) {
  if (scripts[name]) step(name, 'npm', ['run', name]);
}
