import { describe, expect, it } from 'vitest';
import { changeLine, importChanges, ruleChanges, sendsMore } from '../../../src/options/import-changes';
import { DEFAULT_SETTINGS, parseSettings, type MirrorRule, type Settings } from '../../../src/settings/schema';

const rule = (pattern: string, mirrors: string[], flags: Partial<MirrorRule> = {}): MirrorRule => ({
  pattern,
  mirrors,
  passQuery: false,
  sendCookies: false,
  ...flags,
});
const current = [rule('example.com/pub/', ['https://m1.example.org/pub/', 'https://m2.example.org/'], { sendCookies: true })];

describe('ruleChanges', () => {
  it('names a new rule with its mirrors, and what it passes on to them', () => {
    const next = [...current, rule('files.example/', ['https://cdn.example/'], { passQuery: true, sendCookies: true })];
    expect(ruleChanges(current, next)).toEqual([
      { pattern: 'files.example/', kind: 'new-rule', mirrors: ['https://cdn.example/'] },
      { pattern: 'files.example/', kind: 'send-cookies', mirrors: ['https://cdn.example/'] },
      { pattern: 'files.example/', kind: 'pass-query', mirrors: ['https://cdn.example/'] },
    ]);
  });

  it('names new mirrors of a rule, which get the cookies the rule already sends, and mirrors gone', () => {
    const next = [rule('example.com/pub/', ['https://m1.example.org/pub/', 'https://m3.example.net/'], { sendCookies: true })];
    expect(ruleChanges(current, next)).toEqual([
      { pattern: 'example.com/pub/', kind: 'new-mirrors', mirrors: ['https://m3.example.net/'] },
      { pattern: 'example.com/pub/', kind: 'send-cookies', mirrors: ['https://m3.example.net/'] },
      { pattern: 'example.com/pub/', kind: 'removed-mirrors', mirrors: ['https://m2.example.org/'] },
    ]);
  });

  it('names every mirror of a rule that starts passing the query on', () => {
    const next = [
      rule('example.com/pub/', ['https://m1.example.org/pub/', 'https://m2.example.org/'], { sendCookies: true, passQuery: true }),
    ];
    expect(ruleChanges(current, next)).toEqual([
      { pattern: 'example.com/pub/', kind: 'pass-query', mirrors: ['https://m1.example.org/pub/', 'https://m2.example.org/'] },
    ]);
  });

  it('names what an import takes away too: a rule gone, a box unticked', () => {
    expect(ruleChanges(current, current)).toEqual([]);
    expect(ruleChanges(current, [])).toEqual([{ pattern: 'example.com/pub/', kind: 'removed-rule', mirrors: current[0]!.mirrors }]);
    expect(ruleChanges(current, [rule('example.com/pub/', current[0]!.mirrors)])).toEqual([
      { pattern: 'example.com/pub/', kind: 'stops-cookies', mirrors: current[0]!.mirrors },
    ]);
  });
});

describe('importChanges', () => {
  const stored: Settings = { ...parseSettings(DEFAULT_SETTINGS), aria2Secret: 'mine', mirrorRules: current };

  it('lists every setting an import changes, in the form’s order and units, and the token only as set or cleared', () => {
    const next: Settings = {
      ...stored,
      takeover: false,
      speedLimitBytesPerSec: 512 * 1024,
      excludedSites: ['a.example', 'b.example'],
      mirrorRules: [],
      aria2Url: 'https://nas.example:6800/jsonrpc',
      aria2Secret: '',
      aria2MinBytes: 1024 * 1024,
      aria2Sites: ['example.org'],
    };
    const changes = importChanges(stored, next);
    expect(changes.map(changeLine)).toEqual([
      'Take over downloads: from on to off.',
      'Excluded sites: adds a.example, b.example.',
      'Speed limit: from none to 512 KB/s.',
      'The mirror rule for example.com/pub/ is removed: downloads from there are no longer fetched from https://m1.example.org/pub/, https://m2.example.org/.',
      'aria2 address: from none to https://nas.example:6800/jsonrpc.',
      'Send downloads of at least: from none to 1 MB.',
      'Send downloads from these sites: adds example.org.',
      "aria2's secret token: cleared, so that the token you have does not go to another address. Enter the new address's token after the import.",
    ]);
    expect(changes.map(sendsMore)).toEqual([false, false, false, false, true, true, true, true]);
    expect(changes.map(changeLine).join(' ')).not.toContain('mine');
  });

  it('names the first entries of a long list and counts the rest', () => {
    const sites = Array.from({ length: 25 }, (_, i) => `s${i}.example`);
    const [change] = importChanges(stored, { ...stored, excludedSites: sites });
    expect(changeLine(change!)).toBe(`Excluded sites: adds ${sites.slice(0, 10).join(', ')} and 15 more.`);
  });

  it('lists nothing for the same settings', () => {
    expect(importChanges(stored, { ...stored })).toEqual([]);
  });
});
