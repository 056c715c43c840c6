import { describe, expect, it } from 'vitest';
import { contentSha256 } from '../support/content';
import { MiB, useTestBed } from '../support/test-bed';

const bed = useTestBed();
const base64 = (hex: string) => Buffer.from(hex, 'hex').toString('base64');

describe('mirror order from the sources', () => {
  it('uses the mirrors a Link header prefers (pri, then the user country) when only a few may be used', async () => {
    const size = 8 * MiB;
    const sha = await contentSha256(130, size);
    const mirrors = await bed.mirrors(Array.from({ length: 4 }, () => ({ size, seed: 130, rate: 4 * MiB })));
    const [low, nearby, preferred, plain] = mirrors as [(typeof mirrors)[0], (typeof mirrors)[0], (typeof mirrors)[0], (typeof mirrors)[0]];
    const link = [
      `<${low.url}>; rel=duplicate; pri=9`,
      `<${nearby.url}>; rel=duplicate; pri=2; geo=de`,
      `<${preferred.url}>; rel=duplicate; pri=1`,
      `<${plain.url}>; rel=duplicate; pri=2`,
    ].join(', ');
    const primary = await bed.mirror({
      size,
      seed: 130,
      rate: 4 * MiB,
      extraHeaders: { 'Repr-Digest': `sha-256=:${base64(sha)}:`, Link: link },
    });
    // The primary and two mirrors at once: priority 1 first, then the German mirror of the two at priority 2.
    const run = await bed.download(primary.url, { maxMirrors: 3, userLocation: 'de' });
    expect(run.result.status).toBe('complete');
    expect(await run.sha256()).toBe(sha);
    expect(preferred.stats.bytesSent).toBeGreaterThan(MiB);
    expect(nearby.stats.bytesSent).toBeGreaterThan(MiB);
    expect(plain.stats.requests).toHaveLength(0);
    expect(low.stats.requests).toHaveLength(0);
  });
});
