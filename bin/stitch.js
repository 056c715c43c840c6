#!/usr/bin/env node
// Thin launcher: the CLI is built by `npm run build:cli` into dist/cli.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const built = fileURLToPath(new URL('../dist/cli/stitch.js', import.meta.url));
if (!existsSync(built)) {
  console.error('stitch: not built yet; run `npm run build` first');
  process.exit(2);
}
await import(built);
