import { describe, expect, it } from 'vitest';
import { hrwOrder, rankedOrder, type SourceHint } from '../../src/engine/sources/hrw';

const FILE = 'https://origin.example/file.iso';
const urls = Array.from({ length: 8 }, (_, i) => `https://m${i}.example/file.iso`);

describe('mirror order from the sources (pri/geo, priority/location)', () => {
  it('is the HRW order when the sources say nothing', () => {
    expect(
      rankedOrder(
        urls,
        (u) => u,
        FILE,
        () => undefined,
      ),
    ).toEqual(hrwOrder(urls, (u) => u, FILE));
  });

  it('puts lower priority numbers first, unprioritized mirrors last, HRW within a tier', () => {
    const hints: Record<string, SourceHint> = { [urls[5]!]: { priority: 1 }, [urls[2]!]: { priority: 2 }, [urls[7]!]: { priority: 2 } };
    const order = rankedOrder(
      urls,
      (u) => u,
      FILE,
      (u) => hints[u],
    );
    expect(order[0]).toBe(urls[5]);
    expect(new Set(order.slice(1, 3))).toEqual(new Set([urls[2], urls[7]]));
    expect(order.slice(1, 3)).toEqual(hrwOrder([urls[2]!, urls[7]!], (u) => u, FILE));
    expect(order.slice(3)).toEqual(
      hrwOrder(
        urls.filter((u) => !hints[u]),
        (u) => u,
        FILE,
      ),
    );
  });

  it('prefers mirrors in the user country within a priority tier', () => {
    const hints: Record<string, SourceHint> = { [urls[1]!]: { location: 'de' }, [urls[4]!]: { location: 'fr', priority: 1 } };
    const order = rankedOrder(
      urls,
      (u) => u,
      FILE,
      (u) => hints[u],
      'de',
    );
    expect(order[0]).toBe(urls[4]);
    expect(order[1]).toBe(urls[1]);
    // Without a known country, location changes nothing.
    expect(
      rankedOrder(
        urls,
        (u) => u,
        FILE,
        (u) => hints[u],
      )[0],
    ).toBe(urls[4]);
  });
});

describe('the user country from a locale', () => {
  it('reads the region of a browser or POSIX locale', async () => {
    const { countryOfLocale } = await import('../../src/engine/sources/hrw');
    expect(countryOfLocale('de-AT')).toBe('at');
    expect(countryOfLocale('en_US.UTF-8')).toBe('us');
    expect(countryOfLocale('fr')).toBeUndefined();
    expect(countryOfLocale('C.UTF-8')).toBeUndefined();
    expect(countryOfLocale(undefined)).toBeUndefined();
  });
});
