import { describe, expect, test } from 'vitest';
import type { SessionRule } from '../../../src/background/browser-api';
import { ruleKey, SessionRules, type RuleSpec } from '../../../src/background/network/session-rules';
import { FakeBrowser } from '../../support/fake-browser';

const SPEC: RuleSpec = {
  priority: 2,
  condition: { urlFilter: '|http://127.0.0.1:8080/', tabIds: [-1], resourceTypes: ['xmlhttprequest'] },
  action: { type: 'allow' },
};

/** The rule as Firefox's getSessionRules returns it: every field it knows, null when unset. */
const AS_FIREFOX_RETURNS: SessionRule = {
  id: 7,
  priority: 2,
  condition: {
    urlFilter: '|http://127.0.0.1:8080/',
    regexFilter: null,
    isUrlFilterCaseSensitive: null,
    initiatorDomains: null,
    requestDomains: null,
    resourceTypes: ['xmlhttprequest'],
    requestMethods: null,
    tabIds: [-1],
  } as unknown as SessionRule['condition'],
  action: { type: 'allow', requestHeaders: null } as unknown as SessionRule['action'],
};

describe('SessionRules', () => {
  test('a rule is known by what it does, whatever its id, key order or unset fields', () => {
    expect(ruleKey(AS_FIREFOX_RETURNS)).toBe(ruleKey(SPEC));
    expect(ruleKey({ ...SPEC, condition: { resourceTypes: ['xmlhttprequest'], tabIds: [-1], urlFilter: '|http://127.0.0.1:8080/' } })).toBe(
      ruleKey(SPEC),
    );
    expect(ruleKey({ ...SPEC, priority: 1 })).not.toBe(ruleKey(SPEC));
    expect(ruleKey({ ...SPEC, condition: { ...SPEC.condition, tabIds: [1] } })).not.toBe(ruleKey(SPEC));
  });

  test('a wanted rule already in place, as Firefox returns it, is kept; one nobody wants goes', async () => {
    const browser = new FakeBrowser();
    browser.rules = [AS_FIREFOX_RETURNS, { id: 8, condition: { urlFilter: '|https://gone.example/' }, action: { type: 'block' } }];
    const rules = new SessionRules(browser);
    rules.add(() => [SPEC]);
    await rules.sync();
    expect(browser.calls).toEqual(['rules -8']);
    expect(browser.rules.map((r) => r.id)).toEqual([7]);
  });

  test('the sources’ rules are one set: a rule two sources want is added once', async () => {
    const browser = new FakeBrowser();
    const rules = new SessionRules(browser);
    rules.add(() => [SPEC]);
    rules.add(() => [SPEC, { ...SPEC, priority: 1, action: { type: 'block' } }]);
    await rules.sync();
    expect(browser.rules.map((r) => [r.id, r.action.type])).toEqual([
      [1, 'allow'],
      [2, 'block'],
    ]);
  });
});
