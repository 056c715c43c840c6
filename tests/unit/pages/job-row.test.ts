// @vitest-environment happy-dom
import { describe, expect, it, vi } from 'vitest';
import type { JobViewState } from '../../../src/messages';
import { canPlayHere, JobRow, queueMoves, queuePlaceText, rowActions } from '../../../src/popup/job-row';
import { jobView, speak } from './fixtures';

const testIds = (root: Element, prefix: string) =>
  [...root.querySelectorAll('[data-testid]')].map((e) => e.getAttribute('data-testid')!).filter((id) => id.startsWith(prefix));

describe('rowActions', () => {
  const cases: [JobViewState, object, string[]][] = [
    ['queued', {}, ['start-now', 'pause', 'copy-url', 'cancel']],
    ['running', {}, ['pause', 'copy-url', 'cancel']],
    ['paused', { pausedByUser: true }, ['resume', 'relink', 'copy-url', 'cancel']],
    ['paused', { pausedByUser: true, takenOver: true }, ['resume', 'relink', 'hand-back', 'copy-url', 'cancel']],
    ['verifying', {}, ['copy-url', 'cancel']],
    ['saving', {}, ['copy-url']],
    ['saved', { savedDownloadId: 7 }, ['open', 'show', 'copy-url', 'cancel']],
    ['saved', {}, ['copy-url', 'cancel']],
    ['paused', { undoUntil: 5_000 }, ['undo']],
    // One of a Cancel all: its one Undo is above the list, not on each row.
    ['paused', { undoUntil: 5_000, undoGroup: 'g1' }, []],
    ['failed', { error: 'the server said 404' }, ['retry', 'relink', 'copy-url', 'cancel']],
    ['failed', { error: 'could not save', errorCode: 'save-failed' }, ['retry', 'save-as', 'copy-url', 'cancel']],
    ['cancelled', {}, ['copy-url']],
    // A video stream: its URL is a playlist; no new link, and (below) no aria2.
    ['failed', { error: 'the server said 404', stream: true }, ['retry', 'copy-url', 'cancel']],
  ];
  it.each(cases)('%s %o → %o', (state, extra, actions) => {
    expect(rowActions(jobView({ state, ...extra }))).toEqual(actions);
  });

  it('offers Send to aria2 for a download not yet saved, only while an endpoint is set', () => {
    const offered = (state: JobViewState, extra: object = {}) => rowActions(jobView({ state, ...extra }), true).includes('send-to-aria2');
    expect(['queued', 'running', 'paused', 'failed'].map((state) => offered(state as JobViewState))).toEqual([true, true, true, true]);
    expect(offered('failed', { errorCode: 'save-failed' })).toBe(false);
    expect(['verifying', 'saving', 'saved', 'cancelled'].map((state) => offered(state as JobViewState))).toEqual([
      false,
      false,
      false,
      false,
    ]);
    expect(rowActions(jobView({ state: 'running' }), false)).not.toContain('send-to-aria2');
    expect(offered('running', { stream: true })).toBe(false);
  });
});

describe('JobRow', () => {
  it('renders the test ids of the contract with the job in words', () => {
    const row = new JobRow(jobView(), () => {});
    const el = row.element;
    expect(el.dataset.testid).toBe('job-row');
    expect(el.dataset.jobId).toBe('job-1');
    expect(el.dataset.state).toBe('running');
    const text = (id: string) => el.querySelector(`[data-testid="${id}"]`)?.textContent;
    expect(text('job-filename')).toBe('big.iso');
    // Binary units, like the browser's download list: 25,000,000 bytes are 23.8 MB.
    expect(text('job-size')).toBe('23.8 MB of 95.4 MB (25%)');
    expect(text('job-state')).toBe('Downloading');
    expect(text('job-rate')).toBe('4.8 MB/s');
    expect(text('job-eta')).toBe('15 sec left');
    // No notices: no list (an empty one would still be announced as a list).
    expect(el.querySelector('[data-testid="job-notices"]')).toBeNull();
    expect(el.querySelector('[data-testid="job-mirrors"]')).not.toBeNull();
    expect(el.querySelector('[data-testid="job-error"]')).toBeNull();
    const progress = el.querySelector<HTMLProgressElement>('[data-testid="job-progress"]')!;
    expect(progress.value).toBe(25_000_000);
    expect(progress.max).toBe(100_000_000);
    expect(
      testIds(el, 'job-').filter(
        (id) =>
          ![
            'job-row',
            'job-details-toggle',
            'job-filename',
            'job-host',
            'job-speed-limit',
            'job-speed-limit-clear',
            'job-speed-limit-error',
            'job-limit',
            'job-state',
            'job-queue-place',
            'job-origin',
            'job-url',
            'job-progress',
            'job-size',
            'job-rate',
            'job-eta',
            'job-notices',
            'job-mirrors',
          ].includes(id),
      ),
    ).toEqual(['job-pause', 'job-copy-url', 'job-cancel']);
  });

  it('says Retrying, why, which attempt failed and when Stitch gives up, while no source delivers; no rate or time left', () => {
    const row = new JobRow(jobView({ retrying: { attempts: 3, maxAttempts: 8, failure: { code: 'http-status', status: 503 } } }), () => {});
    const el = row.element;
    const text = (id: string) => el.querySelector(`[data-testid="${id}"]`)?.textContent;
    expect(text('job-state')).toBe('Retrying');
    expect(el.querySelector('[data-testid="job-state"]')!.className).toContain('state-retrying');
    expect(text('job-retrying')).toBe(
      'The server is busy or down for maintenance (error 503). Attempt 3 of 8 failed; Stitch tries again by itself and gives up after attempt 8.',
    );
    expect(text('job-rate')).toBe('');
    expect(text('job-eta')).toBe('');
    row.update(jobView());
    expect(text('job-state')).toBe('Downloading');
    expect(el.querySelector('[data-testid="job-retrying"]')).toBeNull();
  });

  it('says Stalled, reconnecting… with 0 B/s and no time left while nothing arrives, then its numbers again', () => {
    const row = new JobRow(jobView({ stalled: true, rate: 0, etaSeconds: undefined }), () => {});
    const el = row.element;
    const text = (id: string) => el.querySelector(`[data-testid="${id}"]`)?.textContent;
    expect(text('job-state')).toBe('Stalled, reconnecting…');
    expect(el.querySelector('[data-testid="job-state"]')!.className).toContain('state-retrying');
    expect(text('job-rate')).toBe('0 B/s');
    expect(text('job-eta')).toBe('');
    row.update(jobView());
    expect(text('job-state')).toBe('Downloading');
    expect(text('job-rate')).toBe('4.8 MB/s');
    expect(text('job-eta')).toBe('15 sec left');
  });

  it('shows its own speed limit on the collapsed row while it has bytes to fetch', () => {
    const row = new JobRow(jobView({ speedLimit: 100 * 1024 }), () => {});
    const limit = row.element.querySelector<HTMLElement>('[data-testid="job-limit"]')!;
    expect(limit.textContent).toBe('limit 100 KB/s');
    expect(limit.hidden).toBe(false);
    row.update(jobView({ speedLimit: undefined }));
    expect(limit.hidden).toBe(true);
    row.update(jobView({ state: 'saved', speedLimit: 100 * 1024 }));
    expect(limit.hidden).toBe(true);
  });

  describe('speed limit field', () => {
    const setUp = (speedLimit?: number) => {
      const set = vi.fn<(job: unknown, bytesPerSecond: number | null) => void>();
      const controls = { move: () => {}, setSpeedLimit: set, aria2Available: () => false, savedPath: async () => undefined };
      const row = new JobRow(jobView({ speedLimit }), () => {}, undefined, undefined, undefined, controls);
      document.body.replaceChildren(row.element);
      const field = row.element.querySelector<HTMLInputElement>('[data-testid="job-speed-limit"]')!;
      const error = row.element.querySelector<HTMLElement>('[data-testid="job-speed-limit-error"]')!;
      const type = (value: string) => {
        field.value = value;
        field.dispatchEvent(new Event('change'));
      };
      return { row, set, field, error, type };
    };

    it.each(['-5', '0', 'abc', '1e20', '99999999999'])('refuses %s in words, sends nothing and keeps the old limit', (typed) => {
      const { row, set, field, error, type } = setUp(100 * 1024);
      type(typed);
      expect(set).not.toHaveBeenCalled();
      expect(error.hidden).toBe(false);
      expect(error.textContent).toBe(
        'Leave the speed limit empty (no limit) or enter a number of KB/s from 1 to 976,562,500. The limit stays at 100 KB/s.',
      );
      expect(field.getAttribute('aria-invalid')).toBe('true');
      expect(field.getAttribute('aria-describedby')).toBe(error.id);
      // A progress update leaves what was typed beside the words about it; the row still shows the old limit.
      row.update(jobView({ speedLimit: 100 * 1024 }));
      expect(field.value).toBe(typed);
      expect(row.element.querySelector('[data-testid="job-limit"]')!.textContent).toBe('limit 100 KB/s');
    });

    it('says there is still no limit when it had none', () => {
      const { set, error, type } = setUp();
      type('-5');
      expect(set).not.toHaveBeenCalled();
      expect(error.textContent).toContain('There is still no limit of its own.');
    });

    it('sets a limit typed right (KB/s), and an empty field or No limit removes it', () => {
      const { row, set, field, error, type } = setUp(100 * 1024);
      type('-5');
      type('250');
      expect(set).toHaveBeenLastCalledWith(expect.anything(), 250 * 1024);
      expect(error.hidden).toBe(true);
      expect(field.hasAttribute('aria-invalid')).toBe(false);
      type('  ');
      expect(set).toHaveBeenLastCalledWith(expect.anything(), null);
      const clear = row.element.querySelector<HTMLButtonElement>('[data-testid="job-speed-limit-clear"]')!;
      expect(clear.hidden).toBe(false);
      clear.click();
      expect(set).toHaveBeenLastCalledWith(expect.anything(), null);
      expect(field.value).toBe('');
      row.update(jobView({ speedLimit: undefined }));
      expect(clear.hidden).toBe(true);
    });
  });

  it('shows the error only while there is one, and the buttons of the new state', () => {
    const row = new JobRow(jobView(), () => {});
    row.update(
      jobView({
        state: 'failed',
        rate: 0,
        error: 'the server changed the file; gave up after restarting from zero 3 times',
        errorCode: 'changed',
        failure: { code: 'changed' },
      }),
    );
    const el = row.element;
    expect(el.dataset.state).toBe('failed');
    expect(el.querySelector('[data-testid="job-error"]')?.textContent).toBe(
      'The file changed on the server during the download, too often to start over.',
    );
    expect(el.querySelector('[data-testid="job-state"]')?.textContent).toBe('Failed');
    expect(el.querySelector('[data-testid="job-rate"]')?.textContent).toBe('');
    expect(el.querySelector('[data-testid="job-pause"]')).toBeNull();
    expect(el.querySelector('[data-testid="job-retry"]')).not.toBeNull();
    expect(el.querySelector('[data-testid="job-cancel"]')?.textContent).toBe('Remove');
    row.update(jobView({ state: 'running' }));
    expect(el.querySelector('[data-testid="job-error"]')).toBeNull();
  });

  it('tells a pause by Stitch from a pause by the user', () => {
    const row = new JobRow(jobView({ state: 'paused', pausedByUser: false, error: 'storage is full' }), () => {});
    expect(row.element.querySelector('[data-testid="job-state"]')?.textContent).toBe('Paused by Stitch');
    row.update(jobView({ state: 'paused', pausedByUser: true }));
    expect(row.element.querySelector('[data-testid="job-state"]')?.textContent).toBe('Paused');
  });

  it('leaves the progress indeterminate while the size is unknown', () => {
    const row = new JobRow(jobView({ size: undefined, received: 4_100_000 }), () => {});
    const progress = row.element.querySelector<HTMLProgressElement>('progress')!;
    expect(progress.hasAttribute('value')).toBe(false);
    expect(row.element.querySelector('[data-testid="job-size"]')?.textContent).toBe('3.9 MB of unknown size');
  });

  it('shows the newest notices', () => {
    const row = new JobRow(jobView({ notices: ['one', 'two', 'three', 'four'] }), () => {});
    const notices = row.element.querySelector('[data-testid="job-notices"]')!;
    expect([...notices.children].map((li) => li.textContent)).toEqual(['Two.', 'Three.', 'Four.']);
  });

  it('updates in place and keeps keyboard focus where it was when the buttons change', () => {
    const row = new JobRow(jobView(), () => {});
    document.body.append(row.element);
    const progress = row.element.querySelector('progress');
    row.element.querySelector<HTMLButtonElement>('[data-testid="job-pause"]')!.focus();
    row.update(jobView({ state: 'paused', pausedByUser: true, rate: 0 }));
    expect(row.element.querySelector('progress')).toBe(progress);
    expect(document.activeElement?.getAttribute('data-testid')).toBe('job-resume');
    // Cancel in the details: its row becomes one line with Undo, which takes the focus.
    row.element.querySelector<HTMLButtonElement>('[data-testid="job-details-toggle"]')!.click();
    row.element.querySelector<HTMLButtonElement>('[data-testid="job-cancel"]')!.focus();
    row.update(jobView({ state: 'paused', pausedByUser: true, rate: 0, undoUntil: 5_000 }));
    expect(document.activeElement?.getAttribute('data-testid')).toBe('job-undo');
    row.element.remove();
  });

  it('calls back with the action and the current job', () => {
    const onAction = vi.fn();
    const row = new JobRow(jobView(), onAction);
    row.update(jobView({ received: 50_000_000 }));
    row.element.querySelector<HTMLButtonElement>('[data-testid="job-copy-url"]')!.click();
    expect(onAction).toHaveBeenCalledWith('copy-url', expect.objectContaining({ received: 50_000_000 }), expect.anything());
  });

  it('names each button with its download, host and size for screen readers', () => {
    const row = new JobRow(jobView({ state: 'saved', savedDownloadId: 3 }), () => {});
    expect(row.element.querySelector('[data-testid="job-show"]')?.getAttribute('aria-label')).toBe(
      'Show in folder big.iso (example.com, 95.4 MB)',
    );
    row.update(jobView({ state: 'queued', size: undefined, received: 0 }));
    expect(row.element.querySelector('[data-testid="job-pause"]')?.getAttribute('aria-label')).toBe('Pause big.iso (example.com)');
    expect(row.element.querySelector('[data-testid="job-size"]')?.textContent).toBe('size unknown');
  });

  it('offers Move up and Move down as far as the queue allows', () => {
    const place = (position: number) => jobView({ state: 'queued', queuePlace: { position, of: 3 } });
    expect(queueMoves(place(1))).toEqual(['down']);
    expect(queueMoves(place(2))).toEqual(['up', 'down']);
    expect(queueMoves(place(3))).toEqual(['up']);
    expect(queueMoves(jobView())).toEqual([]);
  });

  it('draws an empty bar, not a full one, for a download of unknown size that does not run', () => {
    const row = new JobRow(jobView({ state: 'failed', size: undefined }), () => {});
    const progress = row.element.querySelector<HTMLProgressElement>('progress')!;
    expect(progress.hasAttribute('value')).toBe(true);
    expect(progress.value).toBe(0);
  });
});

describe('Play', () => {
  const playsWebm = (type: string) => (type === 'video/webm' ? 'maybe' : '');
  const video = { canPlay: true, filename: 'clip.webm', contentType: 'application/octet-stream' };

  it('is offered for stored audio or video of a type the browser plays', () => {
    expect(canPlayHere(jobView(video), playsWebm)).toBe(true);
    expect(canPlayHere(jobView({ ...video, filename: 'clip.bin', contentType: 'video/webm; codecs="vp8"' }), playsWebm)).toBe(true);
    // Not media, not playable here, or its stored copy is gone (the background leaves canPlay unset).
    expect(canPlayHere(jobView({ ...video, filename: 'big.iso' }), playsWebm)).toBe(false);
    expect(canPlayHere(jobView({ ...video, filename: 'clip.mkv' }), playsWebm)).toBe(false);
    expect(canPlayHere(jobView({ ...video, canPlay: undefined }), playsWebm)).toBe(false);
  });

  it('is the first button of the row’s details and opens the player for the current job', () => {
    const opened: string[] = [];
    const row = new JobRow(
      jobView(video),
      () => {},
      playsWebm,
      (job) => opened.push(job.id),
    );
    const buttons = [...row.element.querySelectorAll<HTMLButtonElement>('.actions button')].map((b) => b.dataset.testid);
    expect(buttons).toEqual(['job-play', 'job-copy-url', 'job-cancel']);
    const play = row.element.querySelector<HTMLButtonElement>('[data-testid="job-play"]')!;
    expect(play.getAttribute('aria-label')).toBe('Play clip.webm (example.com, 95.4 MB)');
    play.click();
    expect(opened).toEqual(['job-1']);
    // Saved and freed: no more Play.
    row.update(jobView({ ...video, canPlay: undefined, state: 'saved', savedDownloadId: 4 }));
    expect(row.element.querySelector('[data-testid="job-play"]')).toBeNull();
  });
});

describe('the row’s origin line', () => {
  it('says host and date, and shows the whole URL when pressed', () => {
    const row = new JobRow(jobView({ url: 'https://cdn.example.com/a/b/big.iso?token=1' }), () => {});
    const origin = row.element.querySelector<HTMLButtonElement>('[data-testid="job-origin"]')!;
    const url = row.element.querySelector<HTMLElement>('[data-testid="job-url"]')!;
    expect(origin.textContent).toMatch(/^cdn\.example\.com · /);
    expect(url.hidden).toBe(true);
    origin.click();
    expect(url.hidden).toBe(false);
    expect(url.textContent).toBe('https://cdn.example.com/a/b/big.iso?token=1');
    expect(origin.getAttribute('aria-expanded')).toBe('true');
  });
});

describe('a queued row says its place', () => {
  const queued = (position: number) => jobView({ state: 'queued', rate: 0, queuePlace: { position, of: 30 } });

  it('as English counts places: 1st, 2nd, 3rd, 4th, 11th, 21st, 22nd, 23rd', () => {
    expect([1, 2, 3, 4, 11, 12, 13, 21, 22, 23].map((n) => queuePlaceText(queued(n)))).toEqual([
      '1st',
      '2nd',
      '3rd',
      '4th',
      '11th',
      '12th',
      '13th',
      '21st',
      '22nd',
      '23rd',
    ]);
  });

  it('as German and Chinese do; nothing for a row that is not queued, or cancelled', () => {
    try {
      speak('de');
      expect(queuePlaceText(queued(3))).toBe('3.');
      speak('zh_CN');
      expect(queuePlaceText(queued(3))).toBe('第 3 位');
    } finally {
      delete (globalThis as { chrome?: unknown }).chrome;
    }
    expect(queuePlaceText(jobView({ state: 'running' }))).toBe('');
    expect(queuePlaceText({ ...queued(2), undoUntil: 5_000 })).toBe('');
  });

  it('beside the state, which still says Queued; the place goes when the row starts', () => {
    const row = new JobRow(queued(3), () => {});
    const place = row.element.querySelector<HTMLElement>('[data-testid="job-queue-place"]')!;
    expect(row.element.querySelector('[data-testid="job-state"]')!.textContent).toBe('Queued');
    expect([place.textContent, place.hidden]).toEqual(['3rd', false]);
    row.update(jobView({ state: 'running' }));
    expect([place.textContent, place.hidden]).toEqual(['', true]);
  });
});
