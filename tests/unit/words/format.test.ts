import { afterEach, describe, expect, it } from 'vitest';
import { formatEta, formatPercent, formatRate, formatSize } from '../../../src/words/format';
import { formatBytes } from '../../../src/engine/format-bytes';

/** The browser's UI language as `chrome.i18n` reports it (messages still fall back to English). */
function uiLanguage(language: string): void {
  (globalThis as { chrome?: unknown }).chrome = { i18n: { getMessage: () => '', getUILanguage: () => language } };
}

afterEach(() => {
  delete (globalThis as { chrome?: unknown }).chrome;
});

describe('formatSize', () => {
  it('counts like the browsers’ download lists: binary multiples labelled KB, MB, GB, one decimal below 100', () => {
    uiLanguage('en-US');
    expect(formatSize(0)).toBe('0 B');
    expect(formatSize(1023)).toBe('1,023 B');
    expect(formatSize(1024)).toBe('1 KB');
    expect(formatSize(1536)).toBe('1.5 KB');
    expect(formatSize(1000 * 1024)).toBe('1,000 KB');
    expect(formatSize(20 * 2 ** 20)).toBe('20 MB');
    expect(formatSize(12_345_678)).toBe('11.8 MB');
    expect(formatSize(123_456_789)).toBe('118 MB');
    expect(formatSize(3_994_091_520)).toBe('3.7 GB');
    expect(formatSize(5.5 * 2 ** 40)).toBe('5.5 TB');
  });

  it('moves up a unit rather than print 1,024', () => {
    uiLanguage('en-US');
    expect(formatSize(2 ** 20 - 1)).toBe('1 MB');
    expect(formatSize(1023 * 1024)).toBe('1,023 KB');
  });

  it('writes numbers the way the browser’s language does', () => {
    uiLanguage('de');
    expect(formatSize(1536)).toBe('1,5 KB');
    expect(formatSize(1000 * 1024)).toBe('1.000 KB');
    expect(formatRate(2_500_000)).toBe('2,4 MB/s');
  });

  it('shows a dash for nonsense', () => {
    expect(formatSize(-1)).toBe('–');
    expect(formatSize(Number.NaN)).toBe('–');
  });
});

describe('formatBytes (CLI and engine messages)', () => {
  it('keeps decimal units with at most three significant digits', () => {
    expect(formatBytes(1500)).toBe('1.5 kB');
    expect(formatBytes(12_345_678)).toBe('12.3 MB');
    expect(formatBytes(999_999)).toBe('1 MB');
  });
});

describe('formatRate', () => {
  it('is bytes per second, and empty when idle', () => {
    uiLanguage('en');
    expect(formatRate(2_500_000)).toBe('2.4 MB/s');
    expect(formatRate(0)).toBe('');
    expect(formatRate(Number.POSITIVE_INFINITY)).toBe('');
  });
});

describe('formatEta', () => {
  it('reads like a person would say it', () => {
    uiLanguage('en');
    expect(formatEta(0)).toBe('0 sec');
    expect(formatEta(44.2)).toBe('45 sec');
    expect(formatEta(60)).toBe('1 min');
    expect(formatEta(185)).toBe('3 min 5 sec');
    expect(formatEta(1500)).toBe('25 min');
    expect(formatEta(3600)).toBe('1 hr');
    expect(formatEta(7800)).toBe('2 hr 10 min');
    expect(formatEta(7199)).toBe('2 hr');
    expect(formatEta(3 * 86_400)).toBe('3 days');
  });

  it('in German', () => {
    uiLanguage('de-DE');
    expect(formatEta(185)).toBe('3 Min. 5 Sek.');
    expect(formatEta(7800)).toBe('2 Std. 10 Min.');
    expect(formatEta(86_400)).toBe('1 Tag');
  });

  it('is empty when unknown', () => {
    expect(formatEta(undefined)).toBe('');
    expect(formatEta(-5)).toBe('');
    expect(formatEta(Number.NaN)).toBe('');
  });
});

describe('formatPercent', () => {
  it('never says 100% before the last byte', () => {
    uiLanguage('en');
    expect(formatPercent(0, 100)).toBe('0%');
    expect(formatPercent(999_999, 1_000_000)).toBe('99%');
    expect(formatPercent(100, 100)).toBe('100%');
    expect(formatPercent(5, undefined)).toBe('');
  });

  it('puts the space German puts', () => {
    uiLanguage('de');
    expect(formatPercent(12, 100)).toBe('12\u00a0%');
  });
});
