import { describe, expect, it } from 'vitest';
import { rangesLength } from '../../src/engine';
import { SAMPLE_BYTES, SAMPLE_COUNT, sampleRanges, validatorVerdict } from '../../src/engine/relink-evidence';

const KiB = 1024;
const MiB = 1024 * KiB;

describe('validatorVerdict', () => {
  const known = {
    url: 'https://dl.example.com/img/v1.img?token=old',
    etag: '"65f00a80-400000"',
    lastModified: 'Tue, 12 Mar 2024 08:00:00 GMT',
  };

  it('compares the ETag, else the date, between addresses of one origin', () => {
    const renewed = 'https://dl.example.com/img/v1.img?token=new';
    expect(validatorVerdict(known, { ...known, url: renewed })).toBe('same');
    expect(validatorVerdict(known, { ...known, url: renewed, etag: '"v2"' })).toBe('differ');
    expect(validatorVerdict({ ...known, etag: undefined }, { ...known, url: renewed, lastModified: 'Wed, 13 Mar 2024 08:00:00 GMT' })).toBe(
      'differ',
    );
    expect(validatorVerdict(known, { url: renewed })).toBe('unknown');
  });

  it('lets validators of another origin prove nothing, equal or not (another port or scheme is another origin)', () => {
    for (const url of [
      'https://mirror.example.org/img/v1.img',
      'https://dl.example.com:8443/img/v1.img',
      'http://dl.example.com/img/v1.img',
    ]) {
      expect(validatorVerdict(known, { ...known, url })).toBe('unknown');
      expect(validatorVerdict(known, { ...known, url, etag: '"v2"' })).toBe('unknown');
    }
  });
});

describe('sampleRanges', () => {
  it('spreads the samples evenly over one stored range: its ends and its eighths', () => {
    const samples = sampleRanges([{ start: 0, end: 4 * MiB }]);
    expect(SAMPLE_COUNT).toBe(9);
    expect(samples).toHaveLength(9);
    expect(samples.every((s) => s.end - s.start === SAMPLE_BYTES)).toBe(true);
    expect(samples[0]).toEqual({ start: 0, end: SAMPLE_BYTES });
    expect(samples[4]).toEqual({ start: 2 * MiB - SAMPLE_BYTES / 2, end: 2 * MiB + SAMPLE_BYTES / 2 });
    expect(samples[8]).toEqual({ start: 4 * MiB - SAMPLE_BYTES, end: 4 * MiB });
  });

  it('spreads them by stored bytes over every stored range, each sample inside one range, the first and last bytes included', () => {
    const stored = [
      { start: 0, end: 1 * MiB },
      { start: 1.25 * MiB, end: 2.75 * MiB },
      { start: 3 * MiB, end: 3.5 * MiB },
    ];
    const samples = sampleRanges(stored);
    expect(samples).toHaveLength(9);
    const inRange = samples.map((s) => stored.findIndex((r) => s.start >= r.start && s.end <= r.end));
    expect(inRange).toEqual([0, 0, 0, 1, 1, 1, 1, 2, 2]);
    expect(samples[0]!.start).toBe(0);
    expect(samples[8]!.end).toBe(3.5 * MiB);
    expect(rangesLength(samples)).toBe(9 * SAMPLE_BYTES);
  });

  it('keeps a sample inside a range shorter than a sample, and the last one ending at the last stored byte', () => {
    const stored = [
      { start: 0, end: 2 * MiB },
      { start: 3 * MiB, end: 3 * MiB + 10 * KiB },
    ];
    const samples = sampleRanges(stored);
    expect(samples.at(-1)).toEqual({ start: 3 * MiB, end: 3 * MiB + 10 * KiB });
    expect(samples.slice(0, -1).every((s) => s.end <= 2 * MiB)).toBe(true);
  });

  it('compares a small store whole, in no more requests than it needs, and nothing when nothing is stored', () => {
    expect(sampleRanges([{ start: 0, end: 100 * KiB }])).toEqual([{ start: 0, end: 100 * KiB }]);
    expect(
      sampleRanges([
        { start: 0, end: 10 },
        { start: 20, end: 21 },
      ]),
    ).toEqual([
      { start: 0, end: 10 },
      { start: 20, end: 21 },
    ]);
    expect(sampleRanges([])).toEqual([]);
  });

  it('never asks for more than SAMPLE_COUNT × SAMPLE_BYTES, however large the store', () => {
    const stored = Array.from({ length: 200 }, (_, i) => ({ start: i * 10 * MiB, end: i * 10 * MiB + 7 * MiB }));
    const samples = sampleRanges(stored);
    expect(samples.length).toBeLessThanOrEqual(SAMPLE_COUNT);
    expect(rangesLength(samples)).toBeLessThanOrEqual(SAMPLE_COUNT * SAMPLE_BYTES);
  });
});
