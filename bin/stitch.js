#!/usr/bin/env -S node --max-semi-space-size=1 --no-opt
// Thin launcher: the CLI is built by `npm run build:cli` into dist/cli.
// The flags keep memory small (a 1 GiB download peaked 5–13 MiB lower with each): a 1 MiB young
// generation (the data path allocates little, and collecting more often cost no measurable CPU),
// and no optimizing compiler (its code and work cost more than it saved: the heavy lifting is
// native, in sockets, files and hashes). `node bin/stitch.js` runs without them.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const built = fileURLToPath(new URL('../dist/cli/stitch.js', import.meta.url));
if (!existsSync(built)) {
  console.error('stitch: not built yet; run `npm run build` first');
  process.exit(2);
}
await import(built);
