import { describe, expect, test } from 'vitest';
import { InvalidSettings, SettingsStore } from '../../../src/background/settings-store';
import { cookieOriginsFor, mirrorUrlsFor } from '../../../src/settings/mirror-rules';
import { DEFAULT_SETTINGS, parseSettings, validateMirrorRule, validateSettings } from '../../../src/settings/schema';
import { exportJson } from '../../../src/settings/settings-file';
import { FakeBrowser } from '../../support/fake-browser';

describe('settings schema', () => {
  test('anything unreadable gives the defaults, never an exception', () => {
    for (const input of [undefined, null, 42, 'x', [], { version: 9 }]) expect(parseSettings(input)).toEqual(DEFAULT_SETTINGS);
  });

  test('bad fields fall back one by one, keeping the good ones', () => {
    const parsed = parseSettings({
      takeover: false,
      thresholdBytes: -5,
      connectionsPerServer: 12,
      maxConcurrentJobs: 2,
      excludedTypes: ['video/*', 'not a type', 7],
      excludedSites: ['https://Example.com/path', ''],
      mirrorRules: [
        { pattern: 'example.com/pub/', mirrors: ['https://m.example.org/pub/', 'ftp://x'] },
        { pattern: '', mirrors: [] },
      ],
    });
    expect(parsed).toMatchObject({
      takeover: false,
      thresholdBytes: DEFAULT_SETTINGS.thresholdBytes,
      connectionsPerServer: DEFAULT_SETTINGS.connectionsPerServer,
      maxConcurrentJobs: 2,
      excludedTypes: ['video/*'],
      excludedSites: ['example.com'],
      mirrorRules: [{ pattern: 'example.com/pub/', mirrors: ['https://m.example.org/pub/'] }],
    });
  });

  test('validation names each bad field in words', () => {
    const errors = validateSettings({
      connectionsPerServer: 7,
      minBlockBytes: 8 * 2 ** 20,
      maxBlockBytes: 2 ** 20,
      mirrorRules: [{ pattern: 'a b', mirrors: ['nope'] }],
    });
    expect(errors.map((e) => e.field)).toEqual([
      'connectionsPerServer',
      'minBlockBytes',
      'mirrorRules.0.pattern',
      'mirrorRules.0.mirrors.0',
    ]);
    expect(errors[0]!.message).toBe('Enter a whole number from 1 to 6.');
    expect(validateSettings(DEFAULT_SETTINGS)).toEqual([]);
    expect(validateSettings('x')).toHaveLength(1);
  });

  test('validation checks the block sizes against each other only when both are given (a save keeps the rest)', () => {
    expect(validateSettings({ minBlockBytes: 32 * 2 ** 20 })).toEqual([]);
    expect(validateSettings({ minBlockBytes: 32 * 2 ** 20, maxBlockBytes: 2 ** 20 }).map((e) => e.field)).toEqual(['minBlockBytes']);
  });

  test('a mirror rule that is not an object, or a list that is not a list, is named as such', () => {
    expect(validateSettings({ excludedSites: 'a.com', mirrorRules: [[], 7] })).toEqual([
      { field: 'excludedSites', message: 'This must be a list.' },
      { field: 'mirrorRules.0', message: 'A mirror rule needs a URL pattern and a list of mirrors.' },
      { field: 'mirrorRules.1', message: 'A mirror rule needs a URL pattern and a list of mirrors.' },
    ]);
    expect(validateMirrorRule({ mirrors: [] }).map((e) => e.field)).toEqual(['mirrorRule.pattern', 'mirrorRule.mirrors']);
  });

  test('excluded sites are host names: garbage is refused in words, a *. wildcard is told to drop its "*."', () => {
    expect(validateSettings({ excludedSites: ['Downloads.Example.com', 'https://cdn.example.org/x', 'not a host!', '*.foo.com'] })).toEqual(
      [
        { field: 'excludedSites.2', message: '“not a host!” is not a host name like example.com.' },
        { field: 'excludedSites.3', message: '“*.foo.com”: write foo.com instead; a site also covers its subdomains.' },
      ],
    );
    // What Chromium's URL parser makes of them is no host either.
    expect(validateSettings({ excludedSites: ['not%20a%20host!', '%2a.foo.com'] }).map((e) => e.field)).toEqual([
      'excludedSites.0',
      'excludedSites.1',
    ]);
    expect(parseSettings({ excludedSites: ['ok.example', '*.foo.com', 'bücher.de', '[::1]'] }).excludedSites).toEqual([
      'ok.example',
      'xn--bcher-kva.de',
      '[::1]',
    ]);
  });

  test('per-site connections: hosts in canonical form, bad entries dropped one by one on load', () => {
    expect(DEFAULT_SETTINGS.connectionsPerSite).toEqual({});
    const parsed = parseSettings({
      connectionsPerSite: { 'Downloads.Example.com': 1, 'https://cdn.example.org/x': 3, 'not a host': 2, 'ok.example': 9 },
    });
    expect(parsed.connectionsPerSite).toEqual({ 'downloads.example.com': 1, 'cdn.example.org': 3 });
    expect(parseSettings({ connectionsPerSite: ['a.com'] }).connectionsPerSite).toEqual({});
    const many = Object.fromEntries(Array.from({ length: 120 }, (_, i) => [`site${i}.example`, 2]));
    expect(Object.keys(parseSettings({ connectionsPerSite: many }).connectionsPerSite)).toHaveLength(100);
  });

  test('per-site connections: validation names each bad entry by its host', () => {
    expect(
      validateSettings({ connectionsPerSite: { 'a.example': 1, 'x y': 2, 'b.example': 0, 'c.example': '2', 'A.example': 3 } }),
    ).toEqual([
      { field: 'connectionsPerSite', message: '“x y” is not a host name like example.com.' },
      { field: 'connectionsPerSite', message: 'For b.example, enter a whole number of connections from 1 to 6.' },
      { field: 'connectionsPerSite', message: 'For c.example, enter a whole number of connections from 1 to 6.' },
      { field: 'connectionsPerSite', message: 'The site a.example is listed twice.' },
    ]);
    expect(validateSettings({ connectionsPerSite: [] })).toEqual([
      {
        field: 'connectionsPerSite',
        message: 'Give each site the most connections to it, like { "downloads.example.com": 1 }.',
      },
    ]);
    const many = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`site${i}.example`, 2]));
    expect(validateSettings({ connectionsPerSite: many })).toEqual([{ field: 'connectionsPerSite', message: 'At most 100 entries.' }]);
    expect(validateSettings({ connectionsPerSite: { 'downloads.example.com': 1 } })).toEqual([]);
  });

  test('per-site connections survive export and import, and a bad import changes nothing', async () => {
    const from = new SettingsStore(new FakeBrowser());
    await from.save({ connectionsPerSite: { 'downloads.example.com': 1, 'Files.Example.org': 3 } });
    const json = exportJson(await from.load());
    expect(JSON.parse(json)).toMatchObject({ connectionsPerSite: { 'downloads.example.com': 1, 'files.example.org': 3 } });
    const to = new SettingsStore(new FakeBrowser());
    expect((await to.import(json)).connectionsPerSite).toEqual({ 'downloads.example.com': 1, 'files.example.org': 3 });
    await expect(to.import(JSON.stringify({ connectionsPerSite: { 'downloads.example.com': 7 } }))).rejects.toThrow(InvalidSettings);
    expect((await to.load()).connectionsPerSite).toEqual({ 'downloads.example.com': 1, 'files.example.org': 3 });
  });

  test('defaults are fresh copies: changing parsed lists does not change the defaults', () => {
    parseSettings({}).excludedSites.push('a.com');
    expect(parseSettings({}).excludedSites).toEqual([]);
    expect(DEFAULT_SETTINGS.excludedSites).toEqual([]);
  });
});

describe('mirror rules', () => {
  const rules = [
    {
      pattern: 'example.com:8080/releases/',
      mirrors: ['https://a.example.org/mirror/', 'https://b.example.org'],
      passQuery: false,
      sendCookies: false,
    },
  ];

  test('rewrite the rest of the path under each mirror prefix, without the query (it may be a signed token)', () => {
    expect(mirrorUrlsFor('http://example.com:8080/releases/v1/x.iso?sig=1', rules)).toEqual([
      'https://a.example.org/mirror/v1/x.iso',
      'https://b.example.org/v1/x.iso',
    ]);
  });

  test('pass the query only when the rule says so', () => {
    const passing = [{ ...rules[0]!, passQuery: true }];
    expect(mirrorUrlsFor('http://example.com:8080/releases/v1/x.iso?sig=1', passing)).toEqual([
      'https://a.example.org/mirror/v1/x.iso?sig=1',
      'https://b.example.org/v1/x.iso?sig=1',
    ]);
  });

  test("allow the user's cookies for the mirrors' origins only when the rule says so", () => {
    expect(cookieOriginsFor('http://example.com:8080/releases/x.iso', rules)).toEqual([]);
    const trusting = [{ ...rules[0]!, mirrors: [...rules[0]!.mirrors, 'https://a.example.org/other/'], sendCookies: true }];
    expect(cookieOriginsFor('http://example.com:8080/releases/x.iso', trusting)).toEqual([
      'https://a.example.org',
      'https://b.example.org',
    ]);
    expect(cookieOriginsFor('http://example.com:8080/elsewhere/x.iso', trusting)).toEqual([]);
  });

  test('rules saved before the choices existed load with both off', () => {
    const parsed = parseSettings({ mirrorRules: [{ pattern: 'example.com/', mirrors: ['https://m.example.org/'] }] });
    expect(parsed.mirrorRules).toEqual([
      { pattern: 'example.com/', mirrors: ['https://m.example.org/'], passQuery: false, sendCookies: false },
    ]);
    expect(
      validateSettings({ mirrorRules: [{ pattern: 'example.com/', mirrors: ['https://m.example.org/'], sendCookies: 'yes' }] }),
    ).toEqual([{ field: 'mirrorRules.0.sendCookies', message: 'This must be on or off (true or false).' }]);
  });

  test('need the same host and port and the path prefix', () => {
    expect(mirrorUrlsFor('http://example.com/releases/x.iso', rules)).toEqual([]);
    expect(mirrorUrlsFor('http://example.com:8080/other/x.iso', rules)).toEqual([]);
    expect(mirrorUrlsFor('not a url', rules)).toEqual([]);
  });
});
