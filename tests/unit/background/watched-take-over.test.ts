import { expect, test } from 'vitest';
import type { UiPort } from '../../../src/background/browser-api';
import { handleRequest, type HandlerDeps } from '../../../src/background/ui/message-handler';
import { UiPorts } from '../../../src/background/ui/ui-ports';
import type { TakeOverOutcome } from '../../../src/background/takeover/download-watcher';
import { UI_PORT, type PortMessage, type WatchedRow } from '../../../src/messages';

/** The handler with only a watcher: Take over needs nothing else (not even the job manager). */
function withWatcher(outcome: TakeOverOutcome) {
  const asked: number[] = [];
  const deps = {
    manager: new Promise(() => {}),
    watcher: { takeOver: async (id: number) => (asked.push(id), outcome) },
  } as unknown as HandlerDeps;
  return { asked, ask: (message: unknown) => handleRequest(message, deps) };
}

test('Take over of a watched download: taken, left with the browser, or refused in words when it is watched no more', async () => {
  const taken = withWatcher('taken');
  expect(await taken.ask({ type: 'take-over-watched', downloadId: 7 })).toEqual({ ok: true, value: { taken: true } });
  expect(taken.asked).toEqual([7]);
  expect(await withWatcher('left').ask({ type: 'take-over-watched', downloadId: 7 })).toEqual({ ok: true, value: { taken: false } });
  expect(await withWatcher('not-watched').ask({ type: 'take-over-watched', downloadId: 7 })).toEqual({
    ok: false,
    error: 'The browser no longer downloads it: it finished, was cancelled or was taken over already.',
  });
});

test('a page that connects gets the watched rows right after its snapshot', async () => {
  const row: WatchedRow = {
    downloadId: 3,
    name: 'big.iso',
    url: 'https://example.com/big.iso',
    host: 'example.com',
    received: 10,
    bytesPerSecond: 0,
    state: 'downloading',
  };
  const ports = new UiPorts(
    async () => ({ type: 'snapshot', jobs: [], notices: [] }),
    () => {},
    () => [{ type: 'watched', rows: [row] }],
  );
  const posted: PortMessage[] = [];
  const port = {
    name: UI_PORT,
    postMessage: (message: PortMessage) => void posted.push(message),
    onDisconnect: { addListener: () => {} },
  } as unknown as UiPort;
  ports.connect(port);
  await Promise.resolve();
  expect(posted.map((m) => m.type)).toEqual(['snapshot', 'watched']);
  expect(posted[1]).toEqual({ type: 'watched', rows: [row] });
});
