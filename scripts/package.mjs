// Packs the built extension (dist/extension) for installing: a Chrome zip and a Firefox .xpi in
// dist/packages/, named with the version from package.json (the build writes it into the manifest).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const { version } = JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8'));
const webExt = resolve(root, 'node_modules/.bin/web-ext');
for (const filename of [`stitch-${version}-chrome.zip`, `stitch-${version}-firefox.xpi`]) {
  execFileSync(
    webExt,
    [
      'build',
      '--source-dir',
      'dist/extension',
      '--artifacts-dir',
      'dist/packages',
      '--filename',
      filename,
      '--overwrite-dest',
      '--ignore-files',
      '**/*.map',
    ],
    {
      cwd: root,
      stdio: 'inherit',
    },
  );
}
