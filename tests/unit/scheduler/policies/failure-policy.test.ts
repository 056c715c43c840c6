import { describe, expect, it } from 'vitest';
import { DownloadError } from '../../../../src/engine/errors';
import { StallError } from '../../../../src/engine/http/exchange';
import { judgeFailure } from '../../../../src/engine/scheduler/policies/failure-policy';
import { MirrorProblem } from '../../../../src/engine/mirror-problem';
import { FallbackToStream, LOST, RestartAll, YIELDED } from '../../../../src/engine/scheduler/loop/outcomes';

const full = () => new DownloadError('storage-full', 'the disk is full');
const judge = (error: unknown, progressed = false) => judgeFailure(error, progressed, 60_000, full);

describe('what a failed request means', () => {
  it('ignores requests cut on purpose (a lost race, a player taking the bandwidth)', () => {
    expect(judge(LOST)).toEqual({ kind: 'ignore' });
    expect(judge(YIELDED, true)).toEqual({ kind: 'ignore' });
  });

  it('ends the run for a changed file, a fallback, a full disk or a fatal error', () => {
    expect(judge(new RestartAll({ kind: 'ranges-ignored' })).kind).toBe('fail');
    expect(judge(new FallbackToStream()).kind).toBe('fail');
    expect(judge(Object.assign(new Error('full'), { name: 'QuotaExceededError' }))).toEqual({ kind: 'fail', error: full() });
    expect(judge(new DownloadError('bad-length', 'lied', false)).kind).toBe('fail');
  });

  it('drops a mirror with a problem, keeping its reason as data', () => {
    expect(judge(new MirrorProblem({ kind: 'restart', cause: { kind: 'ranges-ignored' } }))).toEqual({
      kind: 'drop',
      why: { kind: 'restart', cause: { kind: 'ranges-ignored' } },
      code: 'bad-range',
    });
  });

  it('resumes at once after bytes arrived (paper 1: a reset is a switch, not an outage), noting a stall', () => {
    expect(judge(new TypeError('terminated'), true)).toEqual({ kind: 'resume', stalled: false });
    expect(judge(new StallError(20_000), true)).toEqual({ kind: 'resume', stalled: true });
  });

  it('retries later when nothing arrived, as the server asked, but drops a mirror asking for too long', () => {
    expect(judge(new TypeError('fetch failed'))).toEqual({ kind: 'retry', retryAfterMs: undefined });
    const busy = new DownloadError('http-status', 'the server answered 503', true, 5000);
    expect(judge(busy)).toEqual({ kind: 'retry', retryAfterMs: 5000 });
    const tooLong = new DownloadError('http-status', 'the server answered 503', true, 3_600_000);
    expect(judge(tooLong)).toMatchObject({ kind: 'drop', code: 'http-status' });
  });
});
