import { resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
// The lint toolchain lives apart from the project (tools/lint/package.json says why): its ESLint, not a second copy.
import { ESLint } from '../../tools/lint/node_modules/eslint';
import tseslint from '../../tools/lint/node_modules/typescript-eslint';

// The architecture's lint rules (issue 29), run through ESLint's own API with the project's eslint.config.js on
// source text at virtual paths: the import zones (tools/lint/import-zones.js), the engine's platform-free imports
// and the engine's one clock. Type-aware rules are switched off here (they need the files on disk and a
// TypeScript program); none of the rules under test needs types.
const ROOT = resolve(import.meta.dirname, '../..');
const ZONES = 'stitch/import-zones';

let eslint: ESLint;

beforeAll(() => {
  eslint = new ESLint({
    cwd: ROOT,
    overrideConfigFile: resolve(ROOT, 'eslint.config.js'),
    overrideConfig: [tseslint.configs.disableTypeChecked],
    ignore: false,
  });
});

/** The rule ids of the errors ESLint reports for `code` in the file at `file` (relative to the root). */
async function errors(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: resolve(ROOT, file) });
  const messages = result!.messages;
  // A parse error (ruleId null) would otherwise read as "no crossing".
  expect(messages.filter((message) => message.fatal)).toEqual([]);
  return messages.filter((message) => message.severity === 2).map((message) => message.ruleId ?? '(fatal)');
}

/** The zone errors for one import of `specifier` from `file`. */
async function zoneErrors(file: string, specifier: string): Promise<string[]> {
  const found = await errors(file, `import { x } from '${specifier}';\nexport const y = x;\n`);
  return found.filter((rule) => rule === ZONES);
}

describe('import zones', () => {
  it.each([
    ['the engine', 'src/engine/x.ts', '../background/x'],
    ['the engine', 'src/engine/x.ts', '../storage/x'],
    ['the engine', 'src/engine/scheduler/x.ts', '../../cli/x.ts'],
    ['engine/http', 'src/engine/http/x.ts', '../scheduler/x'],
    ['a page', 'src/popup/x.ts', '../background/x'],
    ['a page', 'src/popup/x.ts', '../offscreen/x'],
    ['a page', 'src/popup/x.ts', '../cli/x'],
    ['a page', 'src/popup/x.ts', '../options/x'],
    ['a page', 'src/options/x.ts', '../player/x'],
    ['a page', 'src/player/x.ts', '../popup/x'],
    ['the background', 'src/background/x.ts', '../popup/x'],
    ['the background', 'src/background/x.ts', '../pages-shared/x'],
    ['the CLI', 'src/cli/x.ts', '../background/x'],
    ['the CLI', 'src/cli/x.ts', '../offscreen/x'],
    ['the CLI', 'src/cli/x.ts', '../player/x'],
    ['the CLI', 'src/cli/x.ts', '../pages-shared/x'],
  ])('%s may not import across: %s imports %s', async (_zone, file, specifier) => {
    expect(await zoneErrors(file, specifier)).toEqual([ZONES]);
  });

  it.each([
    ['src/engine/x.ts', './clock'],
    ['src/engine/scheduler/x.ts', '../http/x'],
    ['src/engine/http/x.ts', './x'],
    ['src/popup/x.ts', '../pages-shared/x'],
    ['src/popup/x.ts', '../engine/x'],
    ['src/popup/x.ts', './list'],
    ['src/background/x.ts', '../engine/x'],
    ['src/background/x.ts', '../words/x'],
    ['src/cli/x.ts', '../engine/x'],
    ['src/cli/x.ts', '../storage/x'],
    ['src/cli/x.ts', 'valibot'],
  ])('%s may import %s', async (file, specifier) => {
    expect(await zoneErrors(file, specifier)).toEqual([]);
  });

  it('sees re-exports, dynamic imports and import types, not only import declarations', async () => {
    const code = [
      "export { a } from '../background/a';",
      "export * from '../background/b';",
      "export const c = () => import('../background/c');",
      "export type D = import('../background/d').D;",
    ].join('\n');
    expect((await errors('src/cli/x.ts', code)).filter((rule) => rule === ZONES)).toHaveLength(4);
  });

  it('keeps Node out of the engine: no node: module', async () => {
    expect(await errors('src/engine/x.ts', "import { readFile } from 'node:fs';\nexport { readFile };\n")).toEqual([
      'no-restricted-imports',
    ]);
    expect(await errors('src/cli/x.ts', "import { readFile } from 'node:fs';\nexport { readFile };\n")).toEqual([]);
  });
});

describe("the engine's one clock", () => {
  const reads = 'export const started = Date.now();\n';

  it('refuses Date.now() in the engine', async () => {
    expect(await errors('src/engine/foo.ts', reads)).toEqual(['no-restricted-properties']);
  });

  it('allows it in the real clock, src/engine/clock.ts, and outside the engine', async () => {
    expect(await errors('src/engine/clock.ts', reads)).toEqual([]);
    expect(await errors('src/background/foo.ts', reads)).toEqual([]);
  });

  it.each([
    ['new Date()', 'export const now = new Date();\n', 'no-restricted-syntax'],
    ['setTimeout', 'export const timer = setTimeout(() => undefined, 10);\n', 'no-restricted-globals'],
    ['setInterval', 'export const timer = setInterval(() => undefined, 10);\n', 'no-restricted-globals'],
    ['performance', 'export const now = performance.now();\n', 'no-restricted-globals'],
  ])('refuses %s in the engine', async (_name, code, rule) => {
    expect(await errors('src/engine/scheduler/foo.ts', code)).toEqual([rule]);
    expect(await errors('src/engine/clock.ts', code)).toEqual([]);
  });

  it('leaves dates that read no time alone', async () => {
    expect(await errors('src/engine/foo.ts', 'export const at = (t: number): Date => new Date(t);\n')).toEqual([]);
  });
});
