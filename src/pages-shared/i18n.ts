/**
 * Strings through the browser's i18n (`_locales/<lang>/messages.json`, chosen by the browser's
 * language). Outside the extension (unit tests, a file:// preview) the English text is used.
 * `$1`… in a message are replaced by `substitutions`, as `i18n.getMessage` does.
 */
import en from '../../public/_locales/en/messages.json';

export type MessageKey = keyof typeof en;

export function t(key: MessageKey, ...substitutions: string[]): string {
  const i18n = (globalThis as { chrome?: { i18n?: { getMessage(key: string, subs?: string[]): string } } }).chrome?.i18n;
  const translated = i18n?.getMessage(key, substitutions);
  if (translated) return translated;
  const entry = en[key] as { message: string; placeholders?: Record<string, { content: string }> };
  const named = entry.message.replace(/\$(\w+)\$/g, (_, name: string) => entry.placeholders?.[name.toLowerCase()]?.content ?? '');
  return named.replace(/\$(\d)/g, (_, n: string) => substitutions[Number(n) - 1] ?? '');
}
