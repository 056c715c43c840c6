import { describe, expect, it } from 'vitest';
import { exportJson, FILE_LIMITS, importInput, readSettingsFile } from '../../../src/settings/settings-file';
import { DEFAULT_SETTINGS, parseSettings, type Settings } from '../../../src/settings/schema';

const stored: Settings = {
  ...parseSettings(DEFAULT_SETTINGS),
  aria2Url: 'http://nas.example:6800/jsonrpc',
  aria2Secret: 'my-token',
  aria2PlainConfirmed: true,
};
const problems = (text: string) => {
  const read = readSettingsFile(text);
  return 'errors' in read ? read.errors : [];
};

describe('exportJson', () => {
  it('writes every setting but the aria2 token and the yes to plain http', () => {
    const written = JSON.parse(exportJson(stored)) as Record<string, unknown>;
    expect(written).toMatchObject({ aria2Url: stored.aria2Url, thresholdBytes: stored.thresholdBytes });
    expect(Object.keys(written).sort()).toEqual(
      Object.keys(stored)
        .filter((key) => key !== 'aria2Secret' && key !== 'aria2PlainConfirmed')
        .sort(),
    );
    expect(exportJson(stored)).not.toContain('my-token');
  });
});

describe('readSettingsFile', () => {
  it('reads the known settings of a file, without a yes to plain http it cannot carry', () => {
    const text = JSON.stringify({ version: 1, stallSeconds: 30, aria2PlainConfirmed: true, unknown: 1, __proto__: { x: 1 } });
    expect(readSettingsFile(text)).toEqual({ value: { version: 1, stallSeconds: 30 } });
  });

  it('takes a plain-http aria2 address: the yes is asked when importing', () => {
    expect(readSettingsFile(JSON.stringify({ aria2Url: 'http://evil.example:6800/jsonrpc' }))).toEqual({
      value: { aria2Url: 'http://evil.example:6800/jsonrpc' },
    });
  });

  it('refuses what is not a settings object, in plain words', () => {
    expect(problems('{ not json')).toEqual([
      { field: '', message: 'The file is not valid JSON. Choose a settings file exported from Stitch.' },
    ]);
    expect(problems('[1, 2]')).toEqual([{ field: '', message: 'The settings must be a JSON object.' }]);
    expect(problems(JSON.stringify({ takeover: 'yes', aria2Sites: 5 })).map((p) => p.field)).toEqual(['takeover', 'aria2Sites']);
  });

  it('refuses a hostile file within its bounds, quickly, with one clear message', () => {
    const started = performance.now();
    const deep = `{"excludedSites":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
    expect(problems(deep)).toEqual([{ field: '', message: expect.stringContaining('more than 8 deep') }]);
    expect(problems('x'.repeat(FILE_LIMITS.bytes + 1))).toEqual([{ field: '', message: expect.stringContaining('over 1 MB') }]);
    const many = JSON.stringify({ mirrorRules: Array.from({ length: 5_000 }, () => ({ pattern: 'a/', mirrors: ['https://b/'] })) });
    expect(problems(many)).toEqual([{ field: 'mirrorRules', message: 'At most 500 entries.' }]);
    const long = JSON.stringify({ mirrorRules: [{ pattern: 'a/', mirrors: [`https://b/${'x'.repeat(500_000)}`] }] });
    expect(problems(long)).toEqual([
      { field: 'mirrorRules', message: 'A text in the file is over 4,096 characters, longer than any setting takes.' },
    ]);
    const longKey = JSON.stringify({ connectionsPerSite: { ['k'.repeat(10_000)]: 1 } });
    expect(problems(longKey)).toEqual([{ field: 'connectionsPerSite', message: expect.stringContaining('4,096 characters') }]);
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it('lists the first problems of a file with hundreds, and counts the rest', () => {
    const list = problems(JSON.stringify({ excludedTypes: Array.from({ length: 300 }, (_, i) => `not a type ${i}`) }));
    expect(list).toHaveLength(FILE_LIMITS.problemsShown + 1);
    expect(list.at(-1)).toEqual({ field: '', message: 'And 280 more problems.' });
  });
});

describe('importInput', () => {
  it('keeps the token and the yes when the file leaves the aria2 address as it is', () => {
    expect(importInput(stored, { stallSeconds: 30 })).toEqual({ input: { stallSeconds: 30, aria2PlainConfirmed: true } });
    expect(importInput(stored, { aria2Secret: 'theirs' })).toEqual({ input: { aria2PlainConfirmed: true } });
    expect(importInput(stored, { aria2Url: 'http://nas.example:6800' })).toEqual({
      input: { aria2Url: 'http://nas.example:6800', aria2PlainConfirmed: true },
    });
  });

  it('does not give the token to a new address, and asks the yes for plain http outside the local network', () => {
    expect(importInput(stored, { aria2Url: 'http://evil.example:6800/jsonrpc', aria2MinBytes: 1 })).toEqual({
      input: { aria2Url: 'http://evil.example:6800/jsonrpc', aria2MinBytes: 1, aria2Secret: '', aria2PlainConfirmed: false },
      plainEndpoint: 'http://evil.example:6800/jsonrpc',
    });
    expect(importInput(stored, { aria2Url: 'https://other.example/jsonrpc', aria2Secret: 'theirs' })).toEqual({
      input: { aria2Url: 'https://other.example/jsonrpc', aria2Secret: 'theirs', aria2PlainConfirmed: false },
    });
    expect(importInput(stored, { aria2Url: 'http://192.168.1.5:6800/jsonrpc' }).plainEndpoint).toBeUndefined();
  });
});
