import { describe, expect, it } from 'vitest';
import { DownloadError } from '../../../../src/engine/errors';
import { withDefaults } from '../../../../src/engine/options';
import type { MirrorReport } from '../../../../src/engine/scheduler/loop/mirror-state';
import { MirrorSet } from '../../../../src/engine/scheduler/loop/mirror-set';
import type { SchedulerHost } from '../../../../src/engine/transfer-host';
import { FakeClock } from '../../../support/fake-clock';

/** A mirror set of one primary on `clock`, with what its host reports. */
function primaryOn(clock: FakeClock) {
  const reports: MirrorReport[][] = [];
  const host = {
    url: 'https://a.example/f.iso',
    sources: ['https://a.example/f.iso'],
    options: withDefaults({ clock }),
    notice: () => {},
    sourceHint: () => undefined,
    knownDigests: () => [],
    expectedPieces: () => undefined,
    mirrorsChanged: (mirrors: MirrorReport[]) => reports.push(mirrors),
  } as unknown as SchedulerHost;
  const set = new MirrorSet(host, { dropped: () => {}, discard: () => {}, grew: () => {} }, new AbortController().signal);
  set.reset();
  return { set, primary: set.mirrors[0]!, reports };
}

describe('MirrorSet: a failure’s back-off, on the injected clock', () => {
  it('is set and read on the same clock: the server asked for 3 s, and gets them to the millisecond', () => {
    // Virtual time far from the real one: a back-off set from the real clock would never end here.
    const clock = new FakeClock(10_000);
    const { set, primary, reports } = primaryOn(clock);
    set.failedBeforeBytes(primary, new DownloadError('http-status', 'busy', true, 3_000, 503), 3_000, 503, 0);
    expect(primary.usable(clock.now())).toBe(false);
    expect(reports.at(-1)![0]!.retryAt).toBe(13_000);
    clock.advance(2_999);
    expect(primary.usable(clock.now())).toBe(false);
    clock.advance(1);
    expect(primary.usable(clock.now())).toBe(true);
    set.report(true);
    expect(reports.at(-1)![0]!.retryAt).toBeUndefined();
  });

  it('backs off exponentially without Retry-After, within the retry options', () => {
    const clock = new FakeClock(10_000);
    const { set, primary } = primaryOn(clock);
    const { retryBaseMs } = withDefaults();
    const refused = new DownloadError('network', 'refused', true);
    set.failedBeforeBytes(primary, refused, undefined, undefined, 0);
    // The first back-off lies between half the base and the base (jitter).
    clock.advance(retryBaseMs / 2 - 1);
    expect(primary.usable(clock.now())).toBe(false);
    clock.advance(retryBaseMs / 2 + 1);
    expect(primary.usable(clock.now())).toBe(true);
    expect(primary.failuresInARow).toBe(1);
  });
});
