import { describe, expect, it } from 'vitest';
import { trustChanges } from '../../../src/options/import-export';
import type { MirrorRule } from '../../../src/settings/schema';

const rule = (pattern: string, mirrors: string[], flags: Partial<MirrorRule> = {}): MirrorRule => ({
  pattern,
  mirrors,
  passQuery: false,
  sendCookies: false,
  ...flags,
});
const current = [rule('example.com/pub/', ['https://m1.example.org/pub/', 'https://m2.example.org/'], { sendCookies: true })];

describe('trustChanges', () => {
  it('names a new rule with its mirrors, and what it passes on to them', () => {
    const next = [...current, rule('files.example/', ['https://cdn.example/'], { passQuery: true, sendCookies: true })];
    expect(trustChanges(current, next)).toEqual([
      { pattern: 'files.example/', kind: 'new-rule', mirrors: ['https://cdn.example/'] },
      { pattern: 'files.example/', kind: 'send-cookies', mirrors: ['https://cdn.example/'] },
      { pattern: 'files.example/', kind: 'pass-query', mirrors: ['https://cdn.example/'] },
    ]);
  });

  it('names new mirrors of a rule, which get the cookies the rule already sends', () => {
    const next = [rule('example.com/pub/', ['https://m1.example.org/pub/', 'https://m3.example.net/'], { sendCookies: true })];
    expect(trustChanges(current, next)).toEqual([
      { pattern: 'example.com/pub/', kind: 'new-mirrors', mirrors: ['https://m3.example.net/'] },
      { pattern: 'example.com/pub/', kind: 'send-cookies', mirrors: ['https://m3.example.net/'] },
    ]);
  });

  it('names every mirror of a rule that starts passing the query on', () => {
    const next = [
      rule('example.com/pub/', ['https://m1.example.org/pub/', 'https://m2.example.org/'], { sendCookies: true, passQuery: true }),
    ];
    expect(trustChanges(current, next)).toEqual([
      { pattern: 'example.com/pub/', kind: 'pass-query', mirrors: ['https://m1.example.org/pub/', 'https://m2.example.org/'] },
    ]);
  });

  it('asks nothing when the import sends less or the same: rules or mirrors gone, boxes unticked', () => {
    expect(trustChanges(current, current)).toEqual([]);
    expect(trustChanges(current, [])).toEqual([]);
    expect(trustChanges(current, [rule('example.com/pub/', ['https://m2.example.org/'])])).toEqual([]);
  });
});
