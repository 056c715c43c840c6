import { describe, expect, test } from 'vitest';
import {
  MAX_RESUMES_WITHOUT_PROGRESS,
  nextStep,
  startWatching,
  type DownloadSample,
  type WatchAction,
} from '../../../src/background/takeover/watch-rescue';

const running = (at: number, bytesReceived: number): DownloadSample => ({
  at,
  state: 'in_progress',
  bytesReceived,
  paused: false,
  canResume: false,
});
const broken = (at: number, bytesReceived: number, canResume = true): DownloadSample => ({
  at,
  state: 'interrupted',
  bytesReceived,
  paused: false,
  canResume,
  error: 'NETWORK_FAILED',
});

/** The default stall timeout (the settings' `stallSeconds`). */
const STALL_MS = 20_000;

/** The actions the policy takes over a recorded history of samples, one poll after another, until it lets go. */
function actions(history: DownloadSample[], stallTimeoutMs = STALL_MS): WatchAction[] {
  let state = startWatching(history[0]!);
  const taken: WatchAction[] = [];
  for (const sample of history) {
    const step = nextStep(state, sample, stallTimeoutMs);
    state = step.state;
    taken.push(step.action);
    if (step.action.kind === 'take-over' || step.action.kind === 'forget' || step.action.kind === 'disk-full') break;
  }
  return taken;
}

const kinds = (history: DownloadSample[], stallTimeoutMs?: number) => actions(history, stallTimeoutMs).map((action) => action.kind);

describe('watch and rescue', () => {
  test('a download that keeps getting bytes is left alone, and forgotten once complete', () => {
    expect(kinds([running(0, 0), running(1_000, 10), running(30_000, 20), { ...running(31_000, 30), state: 'complete' }])).toEqual([
      'wait',
      'wait',
      'wait',
      'forget',
    ]);
  });

  test('a download the user cancelled is forgotten, not resumed', () => {
    expect(kinds([running(0, 0), { ...broken(1_000, 10, true), error: 'USER_CANCELED' }])).toEqual(['wait', 'forget']);
  });

  test.each(['FILE_NO_SPACE', 'FILE_TOO_LARGE', 'FILE_FAILED'])(
    'a download the browser stopped on a full disk (%s) is neither resumed nor taken over: left to the browser, its partial file kept',
    (error) => {
      expect(kinds([running(0, 0), { ...broken(1_000, 190_000_000, true), error }])).toEqual(['wait', 'disk-full']);
    },
  );

  test('an interrupted, resumable download is resumed at once, then with doubling waits while it gets nowhere', () => {
    // Polled every 500 ms, interrupted throughout: resumes at 0, 1 and 3 s; at 7 s Stitch takes it over.
    const history = Array.from({ length: 15 }, (_, i) => broken(i * 500, 100));
    const acted = kinds(history).flatMap((kind, i) => (kind === 'wait' ? [] : [`${kind} ${history[i]!.at}`]));
    expect(acted).toEqual(['resume 0', 'resume 1000', 'resume 3000', 'take-over 7000']);
  });

  test('resumes go on as long as each brings new bytes (Chrome stops after 5)', () => {
    const history = Array.from({ length: 20 }, (_, i) => broken(i * 60_000, i * 1_000));
    expect(kinds(history).every((kind) => kind === 'resume')).toBe(true);
  });

  test('after resumes that bring no byte at all, Stitch takes it over', () => {
    const history = Array.from({ length: MAX_RESUMES_WITHOUT_PROGRESS + 1 }, (_, i) => broken(i * 60_000, 100));
    expect(actions(history)).toEqual([
      ...Array<WatchAction>(MAX_RESUMES_WITHOUT_PROGRESS).fill({ kind: 'resume' }),
      { kind: 'take-over', reason: 'no-progress' },
    ]);
  });

  test('an interrupted download the browser cannot resume is taken over at once', () => {
    expect(actions([running(0, 0), running(1_000, 500), broken(2_000, 500, false)]).at(-1)).toEqual({
      kind: 'take-over',
      reason: 'not-resumable',
    });
  });

  test('no bytes for the stall timeout: pause and resume once, then take it over if it still gets none', () => {
    const t = STALL_MS;
    expect(kinds([running(0, 100), running(t - 1, 100), running(t, 100), running(2 * t - 1, 100), running(2 * t, 100)])).toEqual([
      'wait',
      'wait',
      'restart',
      'wait',
      'take-over',
    ]);
    // A restart that brings bytes again starts the count afresh.
    expect(kinds([running(0, 100), running(t, 100), running(t + 1_000, 200), running(2 * t + 1_000, 200)])).toEqual([
      'wait',
      'restart',
      'wait',
      'restart',
    ]);
  });

  test("the user's stall timeout is the one counted", () => {
    const history = [running(0, 100), running(5_000, 100), running(10_000, 100)];
    expect(kinds(history, 5_000)).toEqual(['wait', 'restart', 'take-over']);
    expect(kinds(history)).toEqual(['wait', 'wait', 'wait']);
  });

  test('a download the user paused is not a stall', () => {
    const paused = (at: number): DownloadSample => ({ ...running(at, 100), paused: true });
    expect(kinds([running(0, 100), paused(STALL_MS), paused(10 * STALL_MS)])).toEqual(['wait', 'wait', 'wait']);
  });
});
