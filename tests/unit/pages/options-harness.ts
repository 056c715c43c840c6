/** The options page with its one seam, `send`, answering like the background would (happy-dom). */
import type { Request, RequestOf, RequestType } from '../../../src/messages';
import { OptionsPage } from '../../../src/options/options-page';
import { DEFAULT_SETTINGS, parseSettings, type Settings } from '../../../src/settings/schema';

export const byTestId = <T extends HTMLElement = HTMLElement>(id: string, root: ParentNode = document) =>
  root.querySelector<T>(`[data-testid="${id}"]`)!;
export const input = (id: string, root?: ParentNode) => byTestId<HTMLInputElement>(id, root);
export const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

export const stored: Settings = {
  ...parseSettings(DEFAULT_SETTINGS),
  thresholdBytes: 50_000_000,
  connectionsPerSite: { 'downloads.example.com': 1 },
  mirrorRules: [
    {
      pattern: 'example.com/pub/',
      mirrors: ['https://m1.example.org/pub/', 'https://m2.example.org/'],
      passQuery: false,
      sendCookies: false,
    },
  ],
};

/** The one seam: `send` answering like the background would, recording what it was asked. */
export type Answers = { [T in RequestType]?: (request: RequestOf<T>) => unknown };

/** Picks the requests of one type out of what was sent. */
export const ofType =
  <T extends RequestType>(type: T) =>
  (request: Request): request is Extract<Request, { type: T }> =>
    request.type === type;

export function fakeBackground(overrides: Answers = {}) {
  const sent: Request[] = [];
  const answers: Answers = {
    'get-settings': () => ({ ok: true, value: { settings: stored, defaults: parseSettings(DEFAULT_SETTINGS) } }),
    'set-settings': (r) => ({ ok: true, value: { settings: parseSettings(r.settings) } }),
    'import-settings': (r) => ({ ok: true, value: { settings: parseSettings(JSON.parse(r.json) as unknown) } }),
    ...overrides,
  };
  const send = async (message: unknown) => {
    const request = message as Request;
    sent.push(request);
    const answer = answers[request.type] as ((request: Request) => unknown) | undefined;
    return answer?.(request) ?? { ok: false, error: 'unknown request' };
  };
  return { send, sent };
}

export async function openPage(background = fakeBackground(), download?: (json: string, name: string) => void) {
  const page = new OptionsPage(document.body, { send: background.send, download });
  await page.load();
  return { page, ...background };
}

export function chooseFile(text: string, name = 'settings.json') {
  const file = new File([text], name, { type: 'application/json' });
  const fileInput = input('settings-import');
  Object.defineProperty(fileInput, 'files', { value: [file], configurable: true });
  fileInput.dispatchEvent(new Event('change'));
}
