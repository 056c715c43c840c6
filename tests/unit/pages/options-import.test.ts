// @vitest-environment happy-dom
import { beforeEach, describe, expect, it } from 'vitest';
import type { Settings } from '../../../src/settings/schema';
import { DEFAULT_SETTINGS, parseSettings } from '../../../src/settings/schema';
import { byTestId, chooseFile, fakeBackground, input, ofType, openPage, settle, stored } from './options-harness';

/** Lets the page read the file, ask the background and show its question. */
const answered = async () => {
  for (let i = 0; i < 4; i++) await settle();
};
const questionLines = () => [...byTestId('import-confirm').querySelectorAll('li')].map((li) => li.textContent);
const importedJson = (sent: ReturnType<typeof fakeBackground>['sent']) =>
  sent.filter(ofType('import-settings')).map((r) => JSON.parse(r.json) as Record<string, unknown>);

describe('importing settings', () => {
  beforeEach(() => document.body.replaceChildren());

  it('imports only a valid file, showing the problems of a bad one', async () => {
    const { sent } = await openPage();
    chooseFile('{ not json');
    await answered();
    expect(sent.some(ofType('import-settings'))).toBe(false);
    expect(byTestId('settings-errors').textContent).toContain('not valid JSON');

    chooseFile(JSON.stringify({ connectionsPerServer: 99 }));
    await answered();
    expect(sent.some(ofType('import-settings'))).toBe(false);
    expect(byTestId('settings-errors').textContent).toContain('Most connections per server: Enter a whole number from 1 to 6.');

    chooseFile(JSON.stringify({ version: 1, connectionsPerServer: 2 }), 'mine.json');
    await answered();
    expect(questionLines()).toEqual(['Most connections per server: from 4 to 2.']);
    expect(byTestId('import-confirm').querySelector('p')!.textContent).toBe('mine.json changes these settings:');
    expect(byTestId('settings-errors').hidden).toBe(true);
    byTestId('import-confirm-apply').click();
    await answered();
    expect(sent.filter(ofType('import-settings'))).toHaveLength(1);
    expect(input('setting-connections').value).toBe('2');
    expect(byTestId('settings-status').textContent).toBe('Imported mine.json and saved it.');
  });

  it('asks before an import sends more to other sites, listing what it changes; nothing is stored until the answer is Import', async () => {
    const { sent } = await openPage();
    const rules = [
      { pattern: 'example.com/pub/', mirrors: ['https://m1.example.org/pub/', 'https://m3.example.net/'], sendCookies: true },
      { pattern: 'files.example/', mirrors: ['https://cdn.example/'], passQuery: true },
    ];
    const shared = JSON.stringify({ mirrorRules: rules });
    chooseFile(shared, 'shared.json');
    await answered();
    const question = byTestId('import-confirm');
    expect(question.querySelector('p')!.textContent).toBe('shared.json changes what Stitch sends to other sites:');
    expect(questionLines()).toEqual([
      'The mirror rule for example.com/pub/ gets new mirrors: https://m3.example.net/.',
      'The mirror rule for example.com/pub/ sends your cookies to https://m1.example.org/pub/, https://m3.example.net/.',
      'The mirror rule for example.com/pub/ no longer uses https://m2.example.org/.',
      'New mirror rule for files.example/: downloads from there are also fetched from https://cdn.example/.',
      "The mirror rule for files.example/ passes the URL's query (often a signed token) on to https://cdn.example/.",
    ]);
    expect(document.activeElement).toBe(question);
    expect(input('settings-import').disabled).toBe(true);
    expect(byTestId('settings-status').textContent).toBe('shared.json is not imported yet: answer the question at the top.');
    expect(sent.some(ofType('import-settings'))).toBe(false);

    byTestId('import-confirm-cancel').click();
    await settle();
    expect(document.querySelector('[data-testid="import-confirm"]')).toBeNull();
    expect(sent.some(ofType('import-settings'))).toBe(false);
    expect(byTestId('settings-status').textContent).toBe('Did not import shared.json: your settings are as they were.');
    expect(input('settings-import').disabled).toBe(false);

    chooseFile(shared, 'shared.json');
    await answered();
    byTestId('import-confirm-apply').click();
    await answered();
    expect(importedJson(sent)).toEqual([{ mirrorRules: rules, aria2PlainConfirmed: false }]);
    expect(byTestId('settings-status').textContent).toBe('Imported shared.json and saved it.');
  });

  it('shows a file that re-points aria2 to plain http and sends every download there, and takes it only with the user’s own yes', async () => {
    const mine: Settings = { ...stored, aria2Url: 'http://127.0.0.1:6800/jsonrpc', aria2Secret: 'my-token' };
    const background = fakeBackground({
      'get-settings': () => ({ ok: true, value: { settings: mine, defaults: parseSettings(DEFAULT_SETTINGS) } }),
    });
    const { sent } = await openPage(background);
    const hostile = JSON.stringify({ aria2Url: 'http://nas.example:6800/jsonrpc', aria2PlainConfirmed: true, aria2MinBytes: 0 });
    chooseFile(hostile, 'hostile.json');
    await answered();
    expect(byTestId('import-confirm').querySelector('p')!.textContent).toBe('hostile.json changes what Stitch sends to other sites:');
    expect(questionLines()).toEqual([
      'aria2 address: from http://127.0.0.1:6800/jsonrpc to http://nas.example:6800/jsonrpc.',
      'Send downloads of at least: from none to 0 MB.',
      "aria2's secret token: cleared, so that the token you have does not go to another address. Enter the new address's token after the import.",
    ]);
    expect(byTestId('import-confirm').textContent).toContain(
      'http://nas.example:6800/jsonrpc is unencrypted and outside this computer and your local network',
    );
    expect(byTestId<HTMLButtonElement>('import-confirm-apply').disabled).toBe(true);
    byTestId('import-confirm-cancel').click();
    await settle();
    expect(sent.some(ofType('import-settings'))).toBe(false);

    chooseFile(hostile, 'hostile.json');
    await answered();
    input('import-confirm-plain').click();
    expect(byTestId<HTMLButtonElement>('import-confirm-apply').disabled).toBe(false);
    byTestId('import-confirm-apply').click();
    await answered();
    expect(importedJson(sent)).toEqual([
      { aria2Url: 'http://nas.example:6800/jsonrpc', aria2MinBytes: 0, aria2Secret: '', aria2PlainConfirmed: true },
    ]);
  });

  it('stores nothing from a file that changes nothing, and says so', async () => {
    const { sent } = await openPage();
    chooseFile(JSON.stringify({ version: 1, thresholdBytes: stored.thresholdBytes }), 'same.json');
    await answered();
    expect(document.querySelector('[data-testid="import-confirm"]')).toBeNull();
    expect(sent.some(ofType('import-settings'))).toBe(false);
    expect(byTestId('settings-status').textContent).toBe('same.json holds the settings you already have: nothing changed.');
  });

  it.each([
    ['a huge file', `{"excludedSites":["${'a'.repeat(1024 * 1024)}"]}`, 'The file is over 1 MB, far larger than any settings file.'],
    ['deep nesting', `{"excludedSites":${'['.repeat(50_000)}${']'.repeat(50_000)}}`, 'The file nests lists and objects more than 8 deep'],
    [
      'thousands of rules',
      JSON.stringify({
        mirrorRules: Array.from({ length: 3_000 }, (_, i) => ({ pattern: `s${i}.example/`, mirrors: ['https://m.example/'] })),
      }),
      'Mirror rules: At most 500 entries.',
    ],
    [
      'a huge string',
      JSON.stringify({ aria2Url: `https://${'a'.repeat(100_000)}.example/` }),
      'aria2 address: A text in the file is over 4,096',
    ],
    [
      'wrong types',
      JSON.stringify({ takeover: 'yes', mirrorRules: {}, stallSeconds: [] }),
      'Take over downloads: This must be on or off (true or false).',
    ],
  ])('refuses %s with a clear message, asks nothing and stores nothing', async (_, text, message) => {
    const { sent } = await openPage();
    chooseFile(text, 'bad.json');
    await answered();
    expect(byTestId('settings-errors').textContent).toContain(message);
    expect(byTestId('settings-status').textContent).toBe('Nothing imported: bad.json has problems, listed at the top.');
    expect(document.querySelector('[data-testid="import-confirm"]')).toBeNull();
    expect(sent.some(ofType('import-settings'))).toBe(false);
  });
});

describe('exporting settings', () => {
  it('exports the saved settings as a JSON file, without the aria2 token', async () => {
    const files: [string, string][] = [];
    const mine: Settings = { ...stored, aria2Url: 'http://nas.example:6800/jsonrpc', aria2Secret: 'my-token', aria2PlainConfirmed: true };
    const background = fakeBackground({
      'get-settings': () => ({ ok: true, value: { settings: mine, defaults: parseSettings(DEFAULT_SETTINGS) } }),
    });
    await openPage(background, (json, name) => files.push([json, name]));
    byTestId('settings-export').click();
    await settle();
    expect(files).toEqual([[expect.any(String), expect.stringMatching(/^stitch-settings-\d{4}-\d\d-\d\d\.json$/)]]);
    const written = JSON.parse(files[0]![0]) as Record<string, unknown>;
    expect(written).toMatchObject({ aria2Url: mine.aria2Url, thresholdBytes: mine.thresholdBytes });
    expect(written).not.toHaveProperty('aria2Secret');
    expect(written).not.toHaveProperty('aria2PlainConfirmed');
    expect(files[0]![0]).not.toContain('my-token');
  });
});
