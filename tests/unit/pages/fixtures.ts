import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { JobView } from '../../../src/messages';

/** A job view with sensible defaults; tests override what they look at. */
export function jobView(overrides: Partial<JobView> = {}): JobView {
  return {
    id: 'job-1',
    url: 'https://example.com/files/big.iso',
    filename: 'big.iso',
    size: 100_000_000,
    received: 25_000_000,
    rate: 5_000_000,
    etaSeconds: 15,
    state: 'running',
    pausedByUser: false,
    notices: [],
    mirrors: [],
    createdAt: 1_000,
    updatedAt: 2_000,
    ...overrides,
  };
}

type Messages = Record<string, { message: string; placeholders?: Record<string, { content: string }> }>;

/** The browser's i18n in `lang`, as chrome.i18n.getMessage fills a message's placeholders (undo: delete globalThis.chrome). */
export function speak(lang: string): void {
  const path = resolve(import.meta.dirname, '../../../public/_locales', lang, 'messages.json');
  const messages = JSON.parse(readFileSync(path, 'utf8')) as Messages;
  const getMessage = (key: string, subs: string[] = []) => {
    const entry = messages[key];
    if (!entry) return '';
    const named = entry.message.replace(/\$(\w+)\$/g, (_, name: string) => entry.placeholders?.[name.toLowerCase()]?.content ?? '');
    return named.replace(/\$(\d)/g, (_, n: string) => subs[Number(n) - 1] ?? '');
  };
  (globalThis as { chrome?: unknown }).chrome = { i18n: { getMessage, getUILanguage: () => lang } };
}

/** The pages' one seam: a `send` that records requests and answers from a table. */
export function fakeSend(answers: Record<string, unknown> = {}) {
  const sent: { type: string; [key: string]: unknown }[] = [];
  const send = async (message: unknown) => {
    const request = message as { type: string };
    sent.push(request);
    return answers[request.type] ?? { ok: true, value: {} };
  };
  return { send, sent };
}
