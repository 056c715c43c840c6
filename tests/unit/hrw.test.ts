import { describe, expect, it } from 'vitest';
import { hrwOrder, hrwScore } from '../../src/engine/sources/hrw';

const MIRRORS = [
  'https://mirror-a.example.org/pub/',
  'https://mirror-b.example.net/linux/',
  'http://ftp.example.de/mirror/',
  'https://cdn.example.com/',
  'http://mirror.example.ac.uk/sites/',
];
const id = (s: string) => s;
const fileKeys = (n: number) => Array.from({ length: n }, (_, i) => `https://example.com/releases/v${i}/app-${i}.tar.gz`);

describe('hrwScore', () => {
  it('is deterministic, a 53-bit non-negative integer, and depends on both keys', () => {
    const s = hrwScore('file', 'mirror');
    expect(hrwScore('file', 'mirror')).toBe(s);
    expect(Number.isSafeInteger(s) && s >= 0).toBe(true);
    expect(hrwScore('file2', 'mirror')).not.toBe(s);
    expect(hrwScore('file', 'mirror2')).not.toBe(s);
    // The separator keeps ("ab", "c") and ("a", "bc") apart.
    expect(hrwScore('ab', 'c')).not.toBe(hrwScore('a', 'bc'));
  });

  it('is pinned, so orders stay the same across versions and platforms', () => {
    // cyrb53 of `${fileKey}\n${key}`; the implementation also reproduces the published cyrb53
    // values ("a" → 7929297801672961), checked when this was written.
    expect([hrwScore('', ''), hrwScore('f', 'm'), hrwScore('ü', '😀')]).toEqual([5677703558649867, 8500065716924459, 5665216791861525]);
  });

  it('uses the whole 53-bit range', () => {
    const scores = fileKeys(2000).map((f) => hrwScore(f, 'm'));
    const top = scores.filter((s) => s >= 2 ** 52).length;
    expect(top).toBeGreaterThan(900);
    expect(top).toBeLessThan(1100);
  });
});

describe('hrwOrder', () => {
  it('returns a permutation without touching the input', () => {
    const input = [...MIRRORS];
    const order = hrwOrder(input, id, 'file');
    expect(input).toEqual(MIRRORS);
    expect([...order].sort()).toEqual([...MIRRORS].sort());
  });

  it.each([
    [[], []],
    [['only'], ['only']],
  ])('handles %j', (items, expected) => {
    expect(hrwOrder(items, id, 'file')).toEqual(expected);
  });

  it('does not depend on the input order', () => {
    for (const f of fileKeys(200)) {
      expect(hrwOrder([...MIRRORS].reverse(), id, f)).toEqual(hrwOrder(MIRRORS, id, f));
    }
  });

  it('orders objects by their key', () => {
    const items = MIRRORS.map((url, i) => ({ url, n: i }));
    const order = hrwOrder(items, (m) => m.url, 'file');
    expect(order.map((m) => m.url)).toEqual(hrwOrder(MIRRORS, id, 'file'));
  });

  it('gives different files different orders', () => {
    const firsts = new Set(fileKeys(50).map((f) => hrwOrder(MIRRORS, id, f).join()));
    expect(firsts.size).toBeGreaterThan(20);
  });

  it('is stable: removing one mirror leaves the order of the others unchanged', () => {
    for (const f of fileKeys(500)) {
      const full = hrwOrder(MIRRORS, id, f);
      for (const gone of MIRRORS) {
        expect(
          hrwOrder(
            MIRRORS.filter((m) => m !== gone),
            id,
            f,
          ),
        ).toEqual(full.filter((m) => m !== gone));
      }
    }
  });

  it('is stable when a mirror is added: only files it wins change their first choice', () => {
    const added = 'https://new-mirror.example.org/';
    for (const f of fileKeys(500)) {
      const before = hrwOrder(MIRRORS, id, f);
      const after = hrwOrder([...MIRRORS, added], id, f);
      expect(after.filter((m) => m !== added)).toEqual(before);
    }
  });

  it('spreads first choices evenly: each of 5 mirrors wins 20% ± 5% of 5000 files', () => {
    const wins = new Map(MIRRORS.map((m) => [m, 0]));
    for (const f of fileKeys(5000)) {
      const first = hrwOrder(MIRRORS, id, f)[0]!;
      wins.set(first, wins.get(first)! + 1);
    }
    for (const [mirror, n] of wins) {
      expect(n / 5000, mirror).toBeGreaterThanOrEqual(0.15);
      expect(n / 5000, mirror).toBeLessThanOrEqual(0.25);
    }
  });

  it('spreads first choices evenly for similar keys too (sequential names)', () => {
    const mirrors = Array.from({ length: 5 }, (_, i) => `m${i}`);
    const wins = new Array(5).fill(0);
    for (let i = 0; i < 5000; i++) {
      wins[mirrors.indexOf(hrwOrder(mirrors, id, `f${i}`)[0]!)]++;
    }
    for (const n of wins) expect(Math.abs(n / 5000 - 0.2)).toBeLessThanOrEqual(0.05);
  });

  it('spreads a failed mirror’s files evenly over the others', () => {
    const [gone, ...rest] = MIRRORS;
    const moved = new Map(rest.map((m) => [m, 0]));
    let total = 0;
    for (const f of fileKeys(10000)) {
      const order = hrwOrder(MIRRORS, id, f);
      if (order[0] !== gone) continue;
      total++;
      const next = order[1]!;
      moved.set(next, moved.get(next)! + 1);
    }
    for (const n of moved.values()) expect(Math.abs(n / total - 0.25)).toBeLessThanOrEqual(0.05);
  });

  it('keeps equal keys in input order', () => {
    const items = [
      { k: 'same', tag: 1 },
      { k: 'same', tag: 2 },
      { k: 'other', tag: 3 },
    ];
    const tags = hrwOrder(items, (t) => t.k, 'file')
      .filter((t) => t.k === 'same')
      .map((t) => t.tag);
    expect(tags).toEqual([1, 2]);
  });
});
