import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// The house rules the folders must keep (issue 29); the import zones are ESLint's (tools/lint/import-zones.js).
const ROOT = resolve(import.meta.dirname, '../..');
const read = (path: string) => readFileSync(resolve(ROOT, path), 'utf8');

/** The policy files named in the first column of docs/how-it-works.md's policy table. */
function policiesInTable(): string[] {
  const doc = read('docs/how-it-works.md');
  const table = doc.slice(doc.indexOf('| policy '));
  const rows = table.split('\n').filter((line) => line.startsWith('| `'));
  return rows.flatMap((row) => [...row.split('|')[1]!.matchAll(/`([\w-]+\.ts)`/g)].map(([, file]) => file!));
}

/** Every file a unit test imports, as a path from the root without its extension. */
function importedByUnitTests(): Set<string> {
  const imported = new Set<string>();
  for (const name of readdirSync(resolve(ROOT, 'tests/unit'), { recursive: true, encoding: 'utf8' })) {
    if (!name.endsWith('.test.ts')) continue;
    const file = resolve(ROOT, 'tests/unit', name);
    for (const [, specifier] of readFileSync(file, 'utf8').matchAll(/from '(\.[^']+)'/g)) {
      imported.add(relative(ROOT, resolve(dirname(file), specifier!)).replace(/\.ts$/, ''));
    }
  }
  return imported;
}

/** The names in the first column of the README's layout, each with the folder it is relative to. */
function layoutNames(): string[] {
  const readme = read('README.md');
  const block = /## Layout\n\n```\n([\s\S]*?)```/.exec(readme)![1]!;
  const names: string[] = [];
  let folder = '';
  for (const line of block.split('\n')) {
    const [, indent, column] = /^( *)(\S.*?)(?: {2,}|$)/.exec(line) ?? [];
    if (column === undefined || indent!.length > 2) continue; // a description's continuation
    if (indent === '') {
      folder = column;
      names.push(...column.split(', '));
    } else {
      names.push(join(folder, column));
    }
  }
  return names;
}

/** Each file under src/engine/scheduler/ (any subfolder), by its name: the paths from the root with that name. */
function schedulerFiles(): Map<string, string[]> {
  const files = new Map<string, string[]>();
  for (const name of readdirSync(resolve(ROOT, 'src/engine/scheduler'), { recursive: true, encoding: 'utf8' })) {
    if (!name.endsWith('.ts')) continue;
    const path = join('src/engine/scheduler', name);
    files.set(basename(name), [...(files.get(basename(name)) ?? []), path]);
  }
  return files;
}

describe('the structure', () => {
  it('every scheduler policy in docs/how-it-works.md exists and a unit test imports it', () => {
    const policies = policiesInTable();
    expect(policies.length).toBeGreaterThan(10);
    const files = schedulerFiles();
    const imported = importedByUnitTests();
    // A name must be one file in the scheduler's folders, wherever it sits, and a unit test must import that file.
    const missing = policies.filter((file) => files.get(file)?.length !== 1);
    const untested = policies.filter((file) => !(files.get(file) ?? []).some((path) => imported.has(path.replace(/\.ts$/, ''))));
    expect({ missing, untested }).toEqual({ missing: [], untested: [] });
  });

  it("the README's layout names only files and folders that exist", () => {
    const names = layoutNames();
    expect(names).toContain('src/engine/scheduler/'); // the parser reads the nested names too
    expect(names.filter((name) => !existsSync(resolve(ROOT, name)))).toEqual([]);
  });
});
