import { describe, expect, it } from 'vitest';
import { formatBytes, formatEta, formatPercent, formatRate } from '../../../src/pages-shared/format';

describe('formatBytes', () => {
  it('uses decimal units with at most three significant digits', () => {
    expect(formatBytes(0)).toBe('0 B');
    expect(formatBytes(999)).toBe('999 B');
    expect(formatBytes(1000)).toBe('1 kB');
    expect(formatBytes(1500)).toBe('1.5 kB');
    expect(formatBytes(12_345_678)).toBe('12.3 MB');
    expect(formatBytes(123_456_789)).toBe('123 MB');
    expect(formatBytes(3_994_091_520)).toBe('3.99 GB');
    expect(formatBytes(5 * 2 ** 40)).toBe('5.5 TB');
  });

  it('moves up a unit instead of printing 1000', () => {
    expect(formatBytes(999_999)).toBe('1 MB');
    expect(formatBytes(999_499)).toBe('999 kB');
  });

  it('shows a dash for nonsense', () => {
    expect(formatBytes(-1)).toBe('–');
    expect(formatBytes(Number.NaN)).toBe('–');
  });
});

describe('formatRate', () => {
  it('is bytes per second, and empty when idle', () => {
    expect(formatRate(2_500_000)).toBe('2.5 MB/s');
    expect(formatRate(0)).toBe('');
    expect(formatRate(Number.POSITIVE_INFINITY)).toBe('');
  });
});

describe('formatEta', () => {
  it('reads like a person would say it', () => {
    expect(formatEta(0)).toBe('0 s');
    expect(formatEta(44.2)).toBe('45 s');
    expect(formatEta(60)).toBe('1 min');
    expect(formatEta(185)).toBe('3 min 5 s');
    expect(formatEta(1500)).toBe('25 min');
    expect(formatEta(3600)).toBe('1 h');
    expect(formatEta(7800)).toBe('2 h 10 min');
    expect(formatEta(7199)).toBe('2 h');
    expect(formatEta(3 * 86_400)).toBe('3 days');
  });

  it('is empty when unknown', () => {
    expect(formatEta(undefined)).toBe('');
    expect(formatEta(-5)).toBe('');
    expect(formatEta(Number.NaN)).toBe('');
  });
});

describe('formatPercent', () => {
  it('never says 100 % before the last byte', () => {
    expect(formatPercent(0, 100)).toBe('0 %');
    expect(formatPercent(999_999, 1_000_000)).toBe('99 %');
    expect(formatPercent(100, 100)).toBe('100 %');
    expect(formatPercent(5, undefined)).toBe('');
  });
});
