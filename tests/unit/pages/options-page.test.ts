// @vitest-environment happy-dom
import { beforeEach, describe, expect, it } from 'vitest';
import { OptionsPage } from '../../../src/options/options-page';
import { DEFAULT_SETTINGS, parseSettings } from '../../../src/settings/schema';
import { byTestId, fakeBackground, input, ofType, openPage, settle, stored } from './options-harness';

describe('OptionsPage', () => {
  beforeEach(() => document.body.replaceChildren());

  it('keeps the form disabled until the stored settings have loaded, so nothing typed is overwritten', async () => {
    let answer: (reply: unknown) => void = () => {};
    const background = fakeBackground({ 'get-settings': () => new Promise((resolve) => (answer = resolve)) });
    const page = new OptionsPage(document.body, { send: background.send });
    const loading = page.load();
    await settle();
    const field = input('setting-connections-per-site');
    expect(field.closest('fieldset')?.disabled).toBe(true); // happy-dom does not match :disabled through a fieldset
    expect(byTestId<HTMLButtonElement>('settings-save').disabled).toBe(true);
    expect(byTestId('settings-status').textContent).toMatch(/loading/i);

    answer({ ok: true, value: { settings: stored, defaults: parseSettings(DEFAULT_SETTINGS) } });
    await loading;
    expect(field.closest('fieldset')?.disabled).toBe(false);
    expect(byTestId<HTMLButtonElement>('settings-save').disabled).toBe(false);
    expect(field.value).toBe('downloads.example.com 1');
  });

  it('fills the form from the stored settings', async () => {
    await openPage();
    expect(byTestId('settings-form').tagName).toBe('FORM');
    expect(input('setting-takeover').checked).toBe(true);
    // 50,000,000 bytes in the browser's binary MB, in full so that saving keeps every byte.
    expect(input('setting-threshold-mb').value).toBe('47.6837158203125');
    expect(input('setting-speed-limit-kbps').value).toBe('');
    const rules = document.querySelectorAll('[data-testid="mirror-rule"]');
    expect(rules).toHaveLength(1);
    expect(input('mirror-rule-pattern', rules[0]).value).toBe('example.com/pub/');
    expect(byTestId<HTMLTextAreaElement>('mirror-rule-mirrors', rules[0]).value).toBe(
      'https://m1.example.org/pub/\nhttps://m2.example.org/',
    );
    expect(input('mirror-rule-pass-query', rules[0]).checked).toBe(false);
    expect(input('mirror-rule-send-cookies', rules[0]).checked).toBe(false);
  });

  it("saves a rule's choices to pass the query and send cookies, each off until ticked", async () => {
    const { sent } = await openPage();
    byTestId('mirror-rule-add').click();
    const rules = document.querySelectorAll('[data-testid="mirror-rule"]');
    input('mirror-rule-pattern', rules[1]).value = 'example.net/';
    byTestId<HTMLTextAreaElement>('mirror-rule-mirrors', rules[1]).value = 'https://m.example.org/';
    input('mirror-rule-pass-query', rules[0]).click();
    input('mirror-rule-send-cookies', rules[1]).click();
    byTestId('settings-save').click();
    await settle();
    expect((sent.find(ofType('set-settings'))?.settings as { mirrorRules?: unknown }).mirrorRules).toEqual([
      { ...stored.mirrorRules[0], passQuery: true, sendCookies: false },
      { pattern: 'example.net/', mirrors: ['https://m.example.org/'], passQuery: false, sendCookies: true },
    ]);
  });

  it('saves valid settings and says "Saved"', async () => {
    const { sent } = await openPage();
    input('setting-speed-limit-kbps').value = '500';
    byTestId('settings-save').click();
    await settle();
    const save = sent.find(ofType('set-settings'));
    expect(save?.settings).toMatchObject({ thresholdBytes: 50_000_000, speedLimitBytesPerSec: 512_000, mirrorRules: stored.mirrorRules });
    expect(byTestId('settings-status').textContent).toBe('Saved.');
    expect(byTestId('settings-errors').hidden).toBe(true);
  });

  it('does not send invalid settings; shows errors next to fields and in the summary', async () => {
    const { sent } = await openPage();
    input('setting-connections').value = '12';
    byTestId('mirror-rule-add').click();
    byTestId('settings-save').click();
    await settle();
    expect(sent.some(ofType('set-settings'))).toBe(false);
    const connections = input('setting-connections');
    expect(connections.getAttribute('aria-invalid')).toBe('true');
    const describedBy = connections.getAttribute('aria-describedby')!.split(' ');
    const nextToField = describedBy.map((id) => document.getElementById(id)!.textContent).join(' ');
    expect(nextToField).toContain('Enter a whole number from 1 to 6.');
    const summary = byTestId('settings-errors');
    expect(summary.hidden).toBe(false);
    expect(summary.textContent).toContain('Most connections per server: Enter a whole number from 1 to 6.');
    expect(summary.textContent).toContain('Mirror rule 2: Enter a URL pattern');
    expect(byTestId('settings-status').textContent).not.toBe('Saved.');
  });

  it('labels the connection settings in plain words', async () => {
    await openPage();
    const described = (control: HTMLElement) =>
      document.getElementById(control.getAttribute('aria-describedby')!.split(' ')[0]!)!.textContent;
    const perServer = input('setting-connections');
    expect(perServer.labels?.[0]?.textContent).toBe('Most connections per server');
    expect(described(perServer)).toMatch(/starts with two .* only while they make the download faster .*browsers allow 6 per server/);
    const perSite = byTestId<HTMLTextAreaElement>('setting-connections-per-site');
    expect(perSite.labels?.[0]?.textContent).toBe('Connections per site');
    expect(described(perSite)).toContain('like downloads.example.com 1');
  });

  it('shows and saves per-site connections, one "host N" per line', async () => {
    const { sent } = await openPage();
    const perSite = byTestId<HTMLTextAreaElement>('setting-connections-per-site');
    expect(perSite.value).toBe('downloads.example.com 1');
    perSite.value = 'downloads.example.com 1\nFiles.Example.org 3';
    byTestId('settings-save').click();
    await settle();
    expect(sent.find(ofType('set-settings'))?.settings).toMatchObject({
      connectionsPerSite: { 'downloads.example.com': 1, 'files.example.org': 3 },
    });
    expect(byTestId('settings-status').textContent).toBe('Saved.');
    expect(perSite.value).toBe('downloads.example.com 1\nfiles.example.org 3');
  });

  it('shows a bad per-site line next to the field and in the summary, and sends nothing', async () => {
    const { sent } = await openPage();
    const perSite = byTestId<HTMLTextAreaElement>('setting-connections-per-site');
    perSite.value = 'downloads.example.com 1\nslow.example.com seven';
    perSite.dispatchEvent(new Event('input', { bubbles: true }));
    perSite.dispatchEvent(new Event('change', { bubbles: true }));
    expect(perSite.getAttribute('aria-invalid')).toBe('true');
    const error = document.getElementById(perSite.getAttribute('aria-describedby')!.split(' ')[1]!)!;
    expect(error.textContent).toBe('For slow.example.com, enter a whole number of connections from 1 to 6.');
    byTestId('settings-save').click();
    await settle();
    expect(sent.some(ofType('set-settings'))).toBe(false);
    expect(byTestId('settings-errors').textContent).toContain(
      'Connections per site: For slow.example.com, enter a whole number of connections from 1 to 6.',
    );
  });

  it('validates a field inline once it is changed, before any save', async () => {
    await openPage();
    const concurrent = input('setting-concurrent');
    concurrent.value = '0';
    concurrent.dispatchEvent(new Event('input', { bubbles: true }));
    concurrent.dispatchEvent(new Event('change', { bubbles: true }));
    expect(concurrent.getAttribute('aria-invalid')).toBe('true');
    expect(byTestId('settings-status').textContent).toBe('Unsaved changes.');
    // Only the changed field speaks up; the summary waits for Save.
    expect(input('setting-threshold-mb').hasAttribute('aria-invalid')).toBe(false);
    expect(byTestId('settings-errors').hidden).toBe(true);
  });

  it('shows the background’s refusal field by field', async () => {
    const { send } = fakeBackground({
      'set-settings': () => ({
        ok: false,
        error: '1 settings are invalid',
        errors: [{ field: 'mirrorRules.0.mirrors.1', message: 'bad mirror' }],
      }),
    });
    await openPage({ send, sent: [] });
    byTestId('settings-save').click();
    await settle();
    const mirrors = byTestId('mirror-rule-mirrors');
    expect(mirrors.getAttribute('aria-invalid')).toBe('true');
    expect(byTestId('settings-errors').textContent).toContain('Mirror rule 1: Bad mirror.');
  });

  it('tests a rule through the background and shows each mirror’s result', async () => {
    const { send, sent } = fakeBackground({
      'test-mirror-rule': (r) => ({
        ok: true,
        value: {
          original: { url: r.sampleUrl, ok: true, size: 1000, message: 'size: 1000 bytes' },
          mirrors: [
            { url: 'https://m1.example.org/pub/a.iso', ok: true, size: 1000, message: 'same size: 1000 bytes' },
            { url: 'https://m2.example.org/a.iso', ok: false, message: '404 Not Found' },
          ],
        },
      }),
    });
    await openPage({ send, sent });
    input('mirror-rule-sample-url').value = 'https://example.com/pub/a.iso';
    byTestId('mirror-rule-test').click();
    await settle();
    expect(sent.at(-1)).toEqual({
      type: 'test-mirror-rule',
      rule: {
        pattern: 'example.com/pub/',
        mirrors: ['https://m1.example.org/pub/', 'https://m2.example.org/'],
        passQuery: false,
        sendCookies: false,
      },
      sampleUrl: 'https://example.com/pub/a.iso',
    });
    const result = byTestId('mirror-rule-test-result');
    expect(result.textContent).toContain('1 of 2 mirrors serve the same file size.');
    expect([...result.querySelectorAll('li')].map((li) => li.getAttribute('data-ok'))).toEqual(['true', 'true', 'false']);
    expect(result.textContent).toContain('404 Not Found');
  });

  it('asks for a sample URL before testing', async () => {
    const { sent } = await openPage();
    byTestId('mirror-rule-test').click();
    await settle();
    expect(sent.some(ofType('test-mirror-rule'))).toBe(false);
    expect(byTestId('mirror-rule-test-result').textContent).toContain('Enter a sample URL');
  });

  it('adds and removes rules', async () => {
    await openPage();
    byTestId('mirror-rule-add').click();
    expect(document.querySelectorAll('[data-testid="mirror-rule"]')).toHaveLength(2);
    expect(document.querySelectorAll('legend')[1]!.textContent).toBe('Rule 2');
    byTestId('mirror-rule-remove').click();
    expect(document.querySelectorAll('[data-testid="mirror-rule"]')).toHaveLength(1);
    expect(document.querySelector('legend')!.textContent).toBe('Rule 1');
  });

  it('fills in the defaults on reset, to be saved explicitly', async () => {
    const { sent } = await openPage();
    byTestId('settings-reset').click();
    expect(input('setting-threshold-mb').value).toBe('20');
    expect(document.querySelectorAll('[data-testid="mirror-rule"]')).toHaveLength(0);
    expect(sent.some(ofType('set-settings'))).toBe(false);
    expect(byTestId('settings-status').textContent).toMatch(/save to keep them/);
  });

  it('renders the defaults and says it is not connected outside the extension', () => {
    new OptionsPage(document.body, {});
    expect(document.querySelector('.banner')!.textContent).toMatch(/Not connected to Stitch/);
    expect(input('setting-threshold-mb').value).toBe('20');
    expect(byTestId<HTMLButtonElement>('settings-save').disabled).toBe(true);
  });
});

describe('leaving with unsaved changes', () => {
  it('asks before leaving only while a change is not saved', async () => {
    const { page } = await openPage();
    const leave = () => page.hasUnsavedChanges;
    expect(leave()).toBe(false);
    const threshold = input('setting-threshold-mb');
    threshold.value = '75';
    threshold.dispatchEvent(new Event('input', { bubbles: true }));
    expect(leave()).toBe(true);
    expect(await page.save()).toBe(true);
    expect(leave()).toBe(false);
  });

  it('puts the form inside the page’s main landmark', async () => {
    await openPage();
    expect(document.querySelector('main [data-testid="settings-form"]')).not.toBeNull();
  });
});
