import { describe, expect, it } from 'vitest';
import { chooseMirrors } from '../../../../src/engine/scheduler/policies/mirror-choice';
import { hrwOrder } from '../../../../src/engine/sources/hrw';
import { mirror } from '../views';

const FILE = 'https://origin.example/file.iso';
const context = (maxMirrors = 8, connections = 2) => ({ now: 1000, connections: () => connections, maxMirrors, fileKey: FILE });

describe('mirror choice (HRW, least loaded, nearest)', () => {
  it('always includes the primary, then the first mirrors in HRW order up to maxMirrors', () => {
    const primary = mirror('https://origin.example/file.iso', { primary: true });
    const others = Array.from({ length: 6 }, (_, i) => mirror(`https://m${i}.example/file.iso`));
    const chosen = chooseMirrors([primary, ...others], context(3));
    expect(chosen).toContain(primary);
    const expected = hrwOrder(others, (m) => m.url, FILE).slice(0, 2);
    expect(new Set(chosen)).toEqual(new Set([primary, ...expected]));
  });

  it('keeps the chosen subset when a mirror is added, unless the new one ranks higher (HRW stability)', () => {
    const mirrors = Array.from({ length: 8 }, (_, i) => mirror(`https://m${i}.example/f`));
    const before = new Set(chooseMirrors(mirrors, context(4)).map((m) => m.url));
    for (let i = 8; i < 30; i++) {
      const added = mirror(`https://m${i}.example/f`);
      const after = new Set(chooseMirrors([...mirrors, added], context(4)).map((m) => m.url));
      const lost = [...before].filter((url) => !after.has(url));
      // Either nothing changes, or exactly one mirror makes room for the newcomer.
      if (after.has(added.url)) expect(lost.length).toBe(1);
      else expect(after).toEqual(before);
    }
  });

  it('widens past a mirror that is backed off or dropped', () => {
    const mirrors = Array.from({ length: 5 }, (_, i) => mirror(`https://m${i}.example/f`));
    const first = chooseMirrors(mirrors, context(2));
    first[0]!.backoffUntil = 5000;
    const widened = chooseMirrors(mirrors, context(2));
    expect(widened).not.toContain(first[0]);
    expect(widened).toHaveLength(2);
  });

  it('orders the chosen by load and distance, leaving out mirrors with every connection busy', () => {
    const near = mirror('https://near.example/f', { rttMs: 10, inFlight: 1 });
    const far = mirror('https://far.example/f', { rttMs: 100 });
    const idle = mirror('https://idle.example/f', { rttMs: 10 });
    const full = mirror('https://full.example/f', { rttMs: 10, inFlight: 2 });
    expect(chooseMirrors([near, far, idle, full], context(8, 2))).toEqual([idle, near, far]);
  });
});
