// @vitest-environment happy-dom
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { WatchedRow } from '../../../src/messages';
import { PopupPage } from '../../../src/popup/popup-page';
import { fakeSend } from './fixtures';

const byTestId = (id: string, root: ParentNode = document) => root.querySelector<HTMLElement>(`[data-testid="${id}"]`);
const rowsShown = () => [...document.querySelectorAll<HTMLElement>('[data-testid="watched-row"]')];
const settle = () => vi.advanceTimersByTimeAsync(0);

function watchedRow(extra: Partial<WatchedRow> = {}): WatchedRow {
  return {
    downloadId: 7,
    name: 'big.iso',
    url: 'https://cdn.example.com/files/big.iso',
    host: 'cdn.example.com',
    received: 25 * 1024 * 1024,
    size: 100 * 1024 * 1024,
    bytesPerSecond: 2 * 1024 * 1024,
    state: 'downloading',
    ...extra,
  };
}

describe('the downloads left with the browser, in the popup', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    document.body.replaceChildren();
  });
  afterEach(() => void vi.useRealTimers());

  it('are hidden while nothing is watched, and listed with name, host, state in words, a bar, size and rate', () => {
    const page = new PopupPage(document.body, fakeSend());
    page.apply({ type: 'snapshot', jobs: [], notices: [] });
    expect(byTestId('watched-list')!.hidden).toBe(true);

    page.apply({
      type: 'watched',
      rows: [watchedRow(), watchedRow({ downloadId: 8, name: 'other.bin', size: undefined, state: 'paused' })],
    });
    expect(byTestId('watched-list')!.hidden).toBe(false);
    expect(byTestId('watched-list')!.querySelector('h2')!.textContent).toBe('In the browser');
    const [first, second] = rowsShown();
    expect(rowsShown().map((row) => row.dataset.downloadId)).toEqual(['7', '8']);
    expect(byTestId('watched-name', first)!.textContent).toBe('big.iso');
    expect(byTestId('watched-state', first)!.textContent).toBe('Downloading in the browser');
    const bar = byTestId('watched-progress', first) as HTMLProgressElement;
    expect([bar.value, bar.max]).toEqual([25 * 1024 * 1024, 100 * 1024 * 1024]);
    expect(byTestId('watched-figures', first)!.textContent).toBe('cdn.example.com · 25 MB of 100 MB (25%) · 2 MB/s');
    expect(byTestId('watched-take-over', first)!.getAttribute('aria-label')).toBe('Take over big.iso');
    // Paused, size unknown: no rate, the bytes so far.
    expect(byTestId('watched-state', second)!.textContent).toBe('Paused in the browser');
    expect(byTestId('watched-figures', second)!.textContent).toBe('cdn.example.com · 25 MB');
    expect(byTestId('watched-progress', second)!.hasAttribute('value')).toBe(false);

    // Each change updates the rows in place: the focused button keeps its focus.
    const button = byTestId('watched-take-over', first)!;
    button.focus();
    page.apply({ type: 'watched', rows: [watchedRow({ received: 50 * 1024 * 1024, state: 'resuming', bytesPerSecond: 0 })] });
    expect(rowsShown()).toEqual([first]);
    expect(document.activeElement).toBe(button);
    expect(byTestId('watched-state', first)!.textContent).toBe('Resuming in the browser');
    expect(byTestId('watched-figures', first)!.textContent).toBe('cdn.example.com · 50 MB of 100 MB (50%)');

    page.apply({ type: 'watched', rows: [] });
    expect(byTestId('watched-list')!.hidden).toBe(true);
    expect(rowsShown()).toEqual([]);
  });

  it('Take over asks the background by the browser’s download id', async () => {
    const { send, sent } = fakeSend({ 'take-over-watched': { ok: true, value: { taken: true } } });
    const page = new PopupPage(document.body, { send });
    page.apply({ type: 'watched', rows: [watchedRow()] });
    byTestId('watched-take-over')!.click();
    await settle();
    expect(sent.filter((r) => r.type !== 'bypass' && r.type !== 'get-settings')).toEqual([{ type: 'take-over-watched', downloadId: 7 }]);
    expect(document.querySelector<HTMLElement>('.action-error')!.hidden).toBe(true);
  });

  it('says in words why a download could not be taken over', async () => {
    const refused = fakeSend({
      'take-over-watched': {
        ok: false,
        error: 'The browser no longer downloads it: it finished, was cancelled or was taken over already.',
      },
    });
    const page = new PopupPage(document.body, { send: refused.send });
    page.apply({ type: 'watched', rows: [watchedRow()] });
    byTestId('watched-take-over')!.click();
    await settle();
    expect(document.querySelector('.action-error')!.textContent).toBe(
      'Could not take over big.iso: The browser no longer downloads it: it finished, was cancelled or was taken over already.',
    );

    document.body.replaceChildren();
    const left = new PopupPage(document.body, fakeSend({ 'take-over-watched': { ok: true, value: { taken: false } } }));
    left.apply({ type: 'watched', rows: [watchedRow()] });
    byTestId('watched-take-over')!.click();
    await settle();
    expect(document.querySelector('.action-error')!.textContent).toBe(
      'Could not take over big.iso: The server would not give Stitch the same file; the browser goes on downloading it.',
    );
  });
});
