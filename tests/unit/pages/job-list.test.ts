// @vitest-environment happy-dom
import { describe, expect, it } from 'vitest';
import { JobList, matchesFilter } from '../../../src/popup/job-list';
import { jobView } from './fixtures';

describe('the job list with many downloads', () => {
  it('filters by name, site or state, every word', () => {
    const job = jobView({ filename: 'debian-13.iso', url: 'https://cdimage.debian.org/x/debian-13.iso', state: 'paused' });
    expect(matchesFilter(job, '')).toBe(true);
    expect(matchesFilter(job, 'DEBIAN')).toBe(true);
    expect(matchesFilter(job, 'cdimage paused')).toBe(true);
    expect(matchesFilter(job, 'debian running')).toBe(false);
  });

  it('filters by the state as the row shows it, in the page’s language', () => {
    const retrying = jobView({
      state: 'running',
      retrying: { attempts: 2, maxAttempts: 8, failure: { code: 'network', network: 'unreached' } },
    });
    expect(matchesFilter(retrying, 'retrying')).toBe(true);
    (globalThis as { chrome?: unknown }).chrome = { i18n: { getMessage: (key: string) => (key === 'statePaused' ? 'Angehalten' : '') } };
    try {
      expect(matchesFilter(jobView({ state: 'paused', pausedByUser: true }), 'angehalten')).toBe(true);
    } finally {
      delete (globalThis as { chrome?: unknown }).chrome;
    }
  });

  it('hides rows that do not match (keeping them) and says when none does', () => {
    const list = new JobList(() => {});
    const jobs = Array.from({ length: 8 }, (_, i) =>
      jobView({ id: `j${i}`, filename: `file-${i}.bin`, state: i % 2 ? 'saved' : 'running' }),
    );
    list.render(jobs, 'ready');
    list.filter = 'file-3';
    list.render(jobs, 'ready');
    const visible = [...list.list.children].filter((row) => !(row as HTMLElement).hidden);
    expect(visible.map((row) => row.getAttribute('data-job-id'))).toEqual(['j3']);
    expect(list.list.children).toHaveLength(8);
    list.filter = 'nothing like it';
    list.render(jobs, 'ready');
    expect(list.element.querySelector('[data-testid="no-match"]')).not.toBeNull();
  });
});
