// @vitest-environment happy-dom
import { beforeEach, describe, expect, it } from 'vitest';
import { PopupPage } from '../../../src/popup/popup-page';
import { fakeSend, jobView } from './fixtures';

const byTestId = (id: string) => document.querySelector<HTMLElement>(`[data-testid="${id}"]`);
const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('PopupPage', () => {
  beforeEach(() => document.body.replaceChildren());

  it('says "loading" until the snapshot, then shows the empty state', () => {
    const page = new PopupPage(document.body, fakeSend());
    expect(byTestId('empty')).toBeNull();
    page.apply({ type: 'snapshot', jobs: [], notices: [] });
    expect(byTestId('empty')).not.toBeNull();
    expect(byTestId('job-list')!.children).toHaveLength(0);
  });

  it('says in the header when the download under way receives nothing, and that the settings limit every download', async () => {
    const { send } = fakeSend({
      'get-settings': { ok: true, value: { settings: { speedLimitBytesPerSec: 2 * 1024 * 1024 }, defaults: {} } },
    });
    const page = new PopupPage(document.body, { send });
    page.apply({ type: 'snapshot', jobs: [jobView({ stalled: true, rate: 0, etaSeconds: undefined })], notices: [] });
    await settle();
    expect(byTestId('summary')!.textContent).toBe('Stalled, reconnecting… · limited to 2 MB/s');
    page.apply({ type: 'job', job: jobView({ id: 'job-2', createdAt: 5 }) });
    expect(byTestId('summary')!.textContent).toBe('1 downloading · 4.8 MB/s · 1 stalled, reconnecting… · limited to 2 MB/s');
    page.apply({ type: 'job', job: jobView({ updatedAt: 3_000 }) });
    expect(byTestId('summary')!.textContent).toBe('2 downloading · 9.5 MB/s · limited to 2 MB/s');
  });

  it('renders one row per job and the page-wide state', () => {
    const page = new PopupPage(document.body, fakeSend());
    page.apply({
      type: 'snapshot',
      jobs: [jobView({ id: 'a', createdAt: 1 }), jobView({ id: 'b', createdAt: 2, state: 'saved', savedDownloadId: 1 })],
      notices: [{ id: 'n', at: 1, message: 'Left to the browser: a POST download' }],
    });
    // The running one first, though older.
    expect([...document.querySelectorAll('[data-testid="job-row"]')].map((r) => r.getAttribute('data-job-id'))).toEqual(['a', 'b']);
    expect(byTestId('empty')).toBeNull();
    expect(byTestId('notice')!.textContent).toContain('Left to the browser');
    expect(byTestId('pause-all')!.getAttribute('aria-disabled')).toBe('false');
    expect(byTestId('resume-all')!.getAttribute('aria-disabled')).toBe('true');
    expect(byTestId('clear-finished')!.getAttribute('aria-disabled')).toBe('false');

    page.apply({ type: 'removed', id: 'a' });
    expect(document.querySelectorAll('[data-testid="job-row"]')).toHaveLength(1);
  });

  it('sends job actions and shows the reply at once', async () => {
    const paused = jobView({ state: 'paused', pausedByUser: true, updatedAt: 3_000 });
    const { send, sent } = fakeSend({ 'job-action': { ok: true, value: { job: paused } } });
    const page = new PopupPage(document.body, { send });
    page.apply({ type: 'snapshot', jobs: [jobView()], notices: [] });
    byTestId('job-pause')!.click();
    await settle();
    expect(sent.filter((r) => r.type !== 'bypass' && r.type !== 'get-settings')).toEqual([
      { type: 'job-action', action: 'pause', id: 'job-1' },
    ]);
    expect(byTestId('job-row')!.dataset.state).toBe('paused');
    expect(byTestId('job-resume')).not.toBeNull();
  });

  it('shows a refused action in plain words', async () => {
    const { send } = fakeSend({ 'open-file': { ok: false, error: 'the file is not saved yet' } });
    const page = new PopupPage(document.body, { send });
    page.apply({ type: 'snapshot', jobs: [jobView({ state: 'saved', savedDownloadId: 2 })], notices: [] });
    byTestId('job-open')!.click();
    await settle();
    expect(document.querySelector('.action-error')!.textContent).toBe('Could not open big.iso: The file is not saved yet.');
  });

  it('opens a saved file itself, inside the click (the browser wants a user gesture), not through the worker', async () => {
    const { send, sent } = fakeSend({});
    const opened: number[] = [];
    let inClick = false;
    const page = new PopupPage(document.body, {
      send,
      openDownload: async (id) => {
        expect(inClick).toBe(true);
        opened.push(id);
      },
    });
    page.apply({ type: 'snapshot', jobs: [jobView({ state: 'saved', savedDownloadId: 7 })], notices: [] });
    inClick = true;
    byTestId('job-open')!.click();
    inClick = false;
    await settle();
    expect(opened).toEqual([7]);
    expect(sent.some((r) => r.type === 'open-file')).toBe(false);
    expect(document.querySelector<HTMLElement>('.action-error')!.hidden).toBe(true);
  });

  it('shows "Copied" on the button after Copy URL', async () => {
    const { send } = fakeSend({});
    const copied: string[] = [];
    const page = new PopupPage(document.body, { send, copyText: async (text) => void copied.push(text) });
    page.apply({ type: 'snapshot', jobs: [jobView()], notices: [] });
    byTestId('job-copy-url')!.click();
    await settle();
    expect(copied).toEqual(['https://example.com/files/big.iso']);
    expect(byTestId('job-copy-url')!.textContent).toBe('Copied');
  });

  it('adds a URL by hand and shows the background’s reason when it refuses', async () => {
    const { send, sent } = fakeSend({
      'add-url': { ok: false, error: '“nope” is not a URL; paste a full address starting with http:// or https://.' },
    });
    new PopupPage(document.body, { send }).apply({ type: 'snapshot', jobs: [], notices: [] });
    const input = byTestId('add-url-input') as HTMLInputElement;
    input.value = 'nope';
    byTestId('add-url-submit')!.click();
    await settle();
    expect(sent.find((r) => r.type === 'add-url')).toEqual({ type: 'add-url', url: 'nope', saveAs: false });
    expect(document.querySelector('#add-url-error')!.textContent).toContain('is not a URL');
    expect(input.getAttribute('aria-invalid')).toBe('true');
  });

  it('copies the URL itself', async () => {
    const copied: string[] = [];
    const page = new PopupPage(document.body, { ...fakeSend(), copyText: async (text) => void copied.push(text) });
    page.apply({ type: 'snapshot', jobs: [jobView()], notices: [] });
    byTestId('job-copy-url')!.click();
    await settle();
    expect(copied).toEqual(['https://example.com/files/big.iso']);
  });

  it('says it is not connected outside the extension, without crashing', () => {
    new PopupPage(document.body, {});
    expect(document.querySelector('.banner')!.textContent).toMatch(/Not connected to Stitch/);
    expect((byTestId('add-url-submit') as HTMLButtonElement).disabled).toBe(true);
    expect(byTestId('empty')).toBeNull();
  });
});
