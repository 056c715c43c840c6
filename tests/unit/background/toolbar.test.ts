import { describe, expect, test } from 'vitest';
import { Toolbar, type NotifyChoices } from '../../../src/background/ui/toolbar';
import { jobView } from '../pages/fixtures';
import { FakeBrowser } from '../../support/fake-browser';

const settle = () => new Promise((r) => setTimeout(r, 0));

describe('Toolbar', () => {
  test('the badge counts downloads that are moving, and is empty when none is', async () => {
    const browser = new FakeBrowser();
    const toolbar = new Toolbar(browser, () => ({ notifyFailed: true, notifyCompleted: false }));
    toolbar.jobChanged(jobView({ id: 'a', state: 'running' }));
    toolbar.jobChanged(jobView({ id: 'b', state: 'saving' }));
    toolbar.jobChanged(jobView({ id: 'c', state: 'paused' }));
    await settle();
    expect(browser.badge).toBe('2');
    toolbar.jobChanged(jobView({ id: 'a', state: 'running', undoUntil: Date.now() + 5_000 }));
    toolbar.jobRemoved('b');
    await settle();
    expect(browser.badge).toBe('');
  });

  test('tells of a failure by default, of a completion only when asked, once per change', async () => {
    const browser = new FakeBrowser();
    const choices: NotifyChoices = { notifyFailed: true, notifyCompleted: false };
    const toolbar = new Toolbar(browser, () => choices);
    toolbar.jobChanged(jobView({ id: 'a', filename: 'big.iso', state: 'running' }));
    toolbar.jobChanged(jobView({ id: 'a', filename: 'big.iso', state: 'failed', failure: { code: 'http-status', status: 404 } }));
    toolbar.jobChanged(jobView({ id: 'a', filename: 'big.iso', state: 'failed', failure: { code: 'http-status', status: 404 } }));
    toolbar.jobChanged(jobView({ id: 'b', filename: 'small.zip', state: 'saving' }));
    toolbar.jobChanged(jobView({ id: 'b', filename: 'small.zip', state: 'saved' }));
    // Seen first in a final state (after a restart): nothing is said again.
    toolbar.jobChanged(jobView({ id: 'c', state: 'failed', error: 'old news' }));
    await settle();
    expect(browser.notes).toEqual([
      {
        id: 'a',
        title: 'Download failed: big.iso',
        message: 'The server does not have this file (error 404). Open Stitch to retry or remove it.',
      },
    ]);
    choices.notifyCompleted = true;
    toolbar.jobChanged(jobView({ id: 'd', filename: 'done.bin', state: 'saving' }));
    toolbar.jobChanged(jobView({ id: 'd', filename: 'done.bin', state: 'saved' }));
    await settle();
    expect(browser.notes.at(-1)).toMatchObject({ id: 'd', title: 'Download complete: done.bin' });
  });
});
