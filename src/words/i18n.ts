/**
 * Strings through the browser's i18n (`_locales/<lang>/messages.json`, chosen by the browser's
 * language). Outside the extension (unit tests, a file:// preview) the English text is used.
 * `$1`… in a message are replaced by `substitutions`, as `i18n.getMessage` does.
 */
import en from '../../public/_locales/en/messages.json';

export type MessageKey = keyof typeof en;

interface BrowserI18n {
  getMessage(key: string, subs?: string[]): string;
  getUILanguage?(): string;
}

function browserI18n(): BrowserI18n | undefined {
  return (globalThis as { chrome?: { i18n?: BrowserI18n } }).chrome?.i18n;
}

export function t(key: MessageKey, ...substitutions: string[]): string {
  const translated = browserI18n()?.getMessage(key, substitutions);
  if (translated) return translated;
  const entry = en[key] as { message: string; placeholders?: Record<string, { content: string }> };
  const named = entry.message.replace(/\$(\w+)\$/g, (_, name: string) => entry.placeholders?.[name.toLowerCase()]?.content ?? '');
  return named.replace(/\$(\d)/g, (_, n: string) => substitutions[Number(n) - 1] ?? '');
}

/**
 * The language the browser's own UI uses (and so the one `t` picks its messages in), for `Intl`:
 * numbers and dates then read like the words around them.
 */
export function uiLocale(): string | undefined {
  const language = browserI18n()?.getUILanguage?.() ?? (typeof navigator === 'undefined' ? undefined : navigator.language);
  try {
    return language ? Intl.getCanonicalLocales(language)[0] : undefined;
  } catch {
    return undefined; // not a BCP 47 tag: Intl's default
  }
}

const numberFormats = new Map<string, Intl.NumberFormat>();

/**
 * A number format in the UI language, made once: the popup formats a few numbers per row about
 * four times a second, and making a format costs ~25 µs where using one costs ~1.
 */
export function numberFormat(options: Intl.NumberFormatOptions = {}): Intl.NumberFormat {
  const locale = uiLocale();
  const key = `${locale}|${JSON.stringify(options)}`;
  let format = numberFormats.get(key);
  if (!format) numberFormats.set(key, (format = new Intl.NumberFormat(locale, options)));
  return format;
}

/** `one` for a count the UI language says in the singular (1 in English and German), else `other`. */
export function plural(count: number, one: MessageKey, other: MessageKey, ...more: string[]): string {
  const key = new Intl.PluralRules(uiLocale()).select(count) === 'one' ? one : other;
  return t(key, formatCount(count), ...more);
}

/** `1,234` / `1.234`: a whole count in the UI language. */
export function formatCount(count: number): string {
  return numberFormat().format(count);
}

/**
 * A message from the engine or the background (English, often a clause such as "the server
 * answered 503") as a sentence for the page: capital first letter, closing full stop.
 */
export function sentence(text: string): string {
  const trimmed = text.trim();
  if (trimmed === '') return '';
  const capital = trimmed.charAt(0).toUpperCase() + trimmed.slice(1);
  return /[.!?…]$/.test(capital) ? capital : `${capital}.`;
}

/**
 * Names the page in its language and says which language that is (for screen readers and
 * hyphenation) and which way it is written: the message's own direction, not the browser's
 * (`@@bidi_dir`), since an Arabic browser without Stitch's Arabic gets English, left to right.
 */
export function localisePage(title: MessageKey): void {
  document.documentElement.lang = t('languageTag');
  document.documentElement.dir = t('textDirection');
  document.title = t(title);
}
