import { describe, expect, it } from 'vitest';
import { announcement, applyPortMessage, EMPTY_MODEL, listOrder, pageActions, summary } from '../../../src/popup/jobs-model';
import { jobView } from './fixtures';

describe('applyPortMessage', () => {
  const older = jobView({ id: 'old', createdAt: 1 });
  const newer = jobView({ id: 'new', createdAt: 2 });

  it('takes a snapshot as the whole truth, newest job first', () => {
    const model = applyPortMessage(
      { ...EMPTY_MODEL, jobs: [jobView({ id: 'gone' })] },
      { type: 'snapshot', jobs: [older, newer], notices: [] },
    );
    expect(model.jobs.map((j) => j.id)).toEqual(['new', 'old']);
  });

  it('replaces a job by id and adds new ones in order', () => {
    let model = applyPortMessage(EMPTY_MODEL, { type: 'snapshot', jobs: [older], notices: [] });
    model = applyPortMessage(model, { type: 'job', job: newer });
    model = applyPortMessage(model, { type: 'job', job: { ...older, received: 99, updatedAt: 3_000 } });
    expect(model.jobs.map((j) => [j.id, j.received])).toEqual([
      ['new', newer.received],
      ['old', 99],
    ]);
  });

  it('ignores a view older than the one it has (a late action reply)', () => {
    let model = applyPortMessage(EMPTY_MODEL, { type: 'job', job: jobView({ updatedAt: 5, state: 'paused' }) });
    model = applyPortMessage(model, { type: 'job', job: jobView({ updatedAt: 4, state: 'running' }) });
    expect(model.jobs[0]!.state).toBe('paused');
  });

  it('forgets removed jobs and collects notices once', () => {
    const notice = { id: 'n1', at: 1, message: 'left to the browser' };
    let model = applyPortMessage(EMPTY_MODEL, { type: 'snapshot', jobs: [older], notices: [] });
    model = applyPortMessage(model, { type: 'removed', id: 'old' });
    model = applyPortMessage(model, { type: 'notice', notice });
    model = applyPortMessage(model, { type: 'notice', notice });
    expect(model).toEqual({ ...EMPTY_MODEL, notices: [notice] });
  });
});

describe('pageActions', () => {
  it('enables only what has something to act on', () => {
    expect(pageActions([])).toEqual({ pauseAll: false, resumeAll: false, cancelAll: false, clearFinished: false });
    expect(pageActions([jobView({ state: 'queued' })])).toEqual({
      pauseAll: true,
      resumeAll: false,
      cancelAll: true,
      clearFinished: false,
    });
    expect(pageActions([jobView({ state: 'paused' }), jobView({ state: 'saved' })])).toEqual({
      pauseAll: false,
      resumeAll: true,
      cancelAll: true,
      clearFinished: true,
    });
    expect(pageActions([jobView({ state: 'saved' }), jobView({ state: 'running', undoUntil: 5 })]).cancelAll).toBe(false);
  });
});

describe('announcement', () => {
  it('speaks of endings, stops by Stitch and new notices, not of progress', () => {
    const running = jobView();
    expect(announcement(running, { ...running, received: running.received + 1 })).toBeUndefined();
    expect(announcement(running, { ...running, state: 'saved' })).toBe('big.iso is saved.');
    expect(announcement(running, { ...running, state: 'failed', failure: { code: 'http-status', status: 404 } })).toBe(
      'big.iso failed: The server does not have this file (error 404).',
    );
    expect(announcement(running, { ...running, state: 'paused', failure: { code: 'storage-full' } })).toBe(
      'big.iso is paused: The disk is full. Stitch kept what it downloaded: free some space, then resume.',
    );
    expect(announcement(running, { ...running, state: 'paused', pausedByUser: true })).toBeUndefined();
    expect(announcement(running, { ...running, notices: ['mirror b dropped'] })).toBe('big.iso: Mirror b dropped.');
    expect(announcement(undefined, running)).toBeUndefined();
  });
});

describe('summary', () => {
  it('adds up the running jobs and counts the queued ones', () => {
    const queued = jobView({ state: 'queued', rate: 0 });
    expect(summary([jobView({ rate: 1 }), jobView({ rate: 2 }), jobView({ state: 'paused', rate: 0 }), queued, queued])).toEqual({
      running: 2,
      rate: 3,
      stalled: 0,
      queued: 2,
    });
  });

  it('counts a running job that receives nothing as stalled, not downloading', () => {
    expect(summary([jobView({ rate: 1 }), jobView({ rate: 0, stalled: true })])).toEqual({ running: 1, rate: 1, stalled: 1, queued: 0 });
  });
});

describe('listOrder', () => {
  it('puts what runs first, then the queue in the order it starts, then the rest newest first', () => {
    const jobs = [
      jobView({ id: 'saved-old', state: 'saved', createdAt: 1 }),
      jobView({ id: 'queued-2', state: 'queued', queuePlace: { position: 2, of: 2 }, createdAt: 2 }),
      jobView({ id: 'running', state: 'running', createdAt: 3 }),
      jobView({ id: 'queued-1', state: 'queued', queuePlace: { position: 1, of: 2 }, createdAt: 4 }),
      jobView({ id: 'paused-new', state: 'paused', createdAt: 5 }),
    ];
    expect(listOrder(jobs).map((j) => j.id)).toEqual(['running', 'queued-1', 'queued-2', 'paused-new', 'saved-old']);
  });
});

describe('the downloads handed to aria2', () => {
  it('come as a list of their own, beside the jobs, with why aria2 could not be read', () => {
    const withJob = applyPortMessage(EMPTY_MODEL, { type: 'job', job: jobView({ id: 'a' }) });
    const row = {
      gid: 'g1',
      state: 'running' as const,
      name: 'big.iso',
      url: 'https://a.example/big.iso',
      totalBytes: 10,
      doneBytes: 5,
      bytesPerSecond: 1,
    };
    const model = applyPortMessage(withJob, { type: 'aria2', configured: true, rows: [row], trouble: 'unreachable' });
    expect(model.jobs.map((j) => j.id)).toEqual(['a']);
    expect(model.aria2).toEqual({ configured: true, rows: [row], trouble: 'unreachable' });
    expect(applyPortMessage(model, { type: 'aria2', configured: false, rows: [] }).aria2).toEqual({ configured: false, rows: [] });
  });
});
