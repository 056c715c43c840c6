import { describe, expect, it } from 'vitest';
import { discoveryRequest, guessedFirstBlock, mirrorsToProbe } from '../../../../src/engine/scheduler/policies/probing';
import { hrwOrder } from '../../../../src/engine/sources/hrw';
import { KiB, MiB, mirror } from '../views';

const FILE = 'https://origin.example/f';

describe('probing', () => {
  it('asks the primary for its first block until the size and first bytes are known, one request at a time', () => {
    const primary = mirror(FILE, { primary: true });
    const context = { now: 0, size: undefined, known: false, playing: false };
    expect(discoveryRequest(primary, context)).toBe(1 * MiB);
    // A player waits: a small first block, so the first frame comes soon.
    expect(discoveryRequest(primary, { ...context, playing: true })).toBe(256 * KiB);
    // A small file: no more than the file.
    expect(discoveryRequest(primary, { ...context, size: 1000 })).toBe(1000);
    expect(discoveryRequest(primary, { ...context, known: true })).toBeUndefined();
    primary.inFlight = 1;
    expect(discoveryRequest(primary, context)).toBeUndefined();
    primary.inFlight = 0;
    primary.backoffUntil = 100;
    expect(discoveryRequest(primary, context)).toBeUndefined();
  });

  it('probes waiting mirrors in HRW order until maxMirrors are in use or being checked', () => {
    const primary = mirror(FILE, { primary: true });
    const waiting = Array.from({ length: 6 }, (_, i) => mirror(`https://m${i}.example/f`, { phase: 'probing' }));
    const chosen = mirrorsToProbe([primary, ...waiting], 0, 3, FILE);
    expect(chosen).toEqual(hrwOrder(waiting, (m) => m.url, FILE).slice(0, 2));
  });

  it('counts probes in flight as in use, skips backed-off mirrors, and never probes twice at once', () => {
    const primary = mirror(FILE, { primary: true });
    const waiting = Array.from({ length: 4 }, (_, i) => mirror(`https://m${i}.example/f`, { phase: 'probing' }));
    const order = hrwOrder(waiting, (m) => m.url, FILE);
    order[0]!.inFlight = 1;
    order[1]!.backoffUntil = 500;
    expect(mirrorsToProbe([primary, ...waiting], 0, 3, FILE)).toEqual([order[2]]);
    expect(mirrorsToProbe([primary, ...waiting], 600, 3, FILE)).toEqual([order[1]]);
  });

  it("guesses a mirror's first block past the primary's first block and every block guessed before", () => {
    expect(guessedFirstBlock([])).toEqual({ start: 1 * MiB, end: 1.5 * MiB });
    const primaryFirst = { start: 0, end: 1 * MiB };
    expect(guessedFirstBlock([primaryFirst])).toEqual({ start: 1 * MiB, end: 1.5 * MiB });
    expect(guessedFirstBlock([primaryFirst, { start: 1 * MiB, end: 1.5 * MiB }])).toEqual({ start: 1.5 * MiB, end: 2 * MiB });
    // Claims in any order: past the furthest.
    expect(guessedFirstBlock([{ start: 1.5 * MiB, end: 2 * MiB }, primaryFirst])).toEqual({ start: 2 * MiB, end: 2.5 * MiB });
  });
});
