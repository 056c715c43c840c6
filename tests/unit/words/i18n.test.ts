import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sentence, t } from '../../../src/words/i18n';

const ROOT = resolve(import.meta.dirname, '../../..');
const LOCALES = resolve(ROOT, 'public/_locales');
type Messages = Record<string, { message: string; placeholders?: Record<string, { content: string }> }>;
const load = (lang: string) => JSON.parse(readFileSync(resolve(LOCALES, lang, 'messages.json'), 'utf8')) as Messages;
const languages = () => readdirSync(LOCALES);

function sources(dir: string): { path: string; text: string }[] {
  return readdirSync(resolve(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts'))
    .map((name) => ({ path: join(dir, name), text: readFileSync(resolve(ROOT, dir, name), 'utf8') }));
}

/** Keys named literally in `t('key'…)` and `plural(n, 'one', 'other'…)` calls, and `__MSG_key__` in the manifest. */
function keysUsed(): Map<string, string> {
  const used = new Map<string, string>();
  for (const { path, text } of sources('src')) {
    for (const [, key] of text.matchAll(/\bt\(\s*'(\w+)'/g)) used.set(key!, path);
    for (const [, one, other] of text.matchAll(/\bplural\([^,()]+(?:\([^()]*\))?,\s*'(\w+)',\s*'(\w+)'/g)) {
      used.set(one!, path);
      used.set(other!, path);
    }
  }
  for (const [, key] of readFileSync(resolve(ROOT, 'manifest.json'), 'utf8').matchAll(/__MSG_(\w+)__/g)) used.set(key!, 'manifest.json');
  return used;
}

const placeholderNames = (message: string) => [...new Set(message.match(/\$\w+\$/g) ?? [])].map((p) => p.toLowerCase()).sort();

describe('localisation', () => {
  it('falls back to English outside the extension, with its placeholders filled', () => {
    expect(t('stateRetrying')).toBe('Retrying');
    expect(t('downloadingSummary', '3')).toBe('3 downloading');
    expect(t('failedOpen', 'file.bin', 'User gesture required.')).toBe('Could not open file.bin: User gesture required.');
  });

  it('every key the code names exists in every language', () => {
    const used = keysUsed();
    expect(used.size).toBeGreaterThan(100);
    for (const lang of languages()) {
      const messages = load(lang);
      const missing = [...used].filter(([key]) => !(key in messages)).map(([key, path]) => `${key} (${path})`);
      expect(missing, lang).toEqual([]);
    }
  });

  it('no language has keys another lacks, and each message uses the same placeholders', () => {
    const en = load('en');
    for (const lang of languages().filter((l) => l !== 'en')) {
      const other = load(lang);
      expect(Object.keys(other).sort(), `${lang} has keys English lacks, or lacks some`).toEqual(Object.keys(en).sort());
      for (const key of Object.keys(en)) {
        // A language may reorder the placeholders, never drop or add one.
        expect(placeholderNames(other[key]!.message), `${lang} ${key}`).toEqual(placeholderNames(en[key]!.message));
        expect(other[key]!.placeholders, `${lang} ${key} placeholders`).toEqual(en[key]!.placeholders);
        expect(other[key]!.message.trim(), `${lang} ${key} is empty`).not.toBe('');
      }
    }
  });

  it('every language is translated, not copied from English', () => {
    const en = load('en');
    // The same in English on purpose: names, lines that are only placeholders, the direction, and
    // words a language took from English ("Downloads" in German, "bytes" in Spanish).
    const same = new Set([
      'extName',
      'downloadsList',
      'errorLine',
      'saidNotice',
      'playerDocumentTitle',
      'sizeOfTotal',
      'sizeInBytes',
      'jobNameHost',
      'jobNameHostSize',
      'textDirection',
    ]);
    for (const lang of languages().filter((l) => l !== 'en')) {
      const other = load(lang);
      const copied = Object.keys(en).filter((key) => !same.has(key) && other[key]!.message === en[key]!.message);
      expect(copied, lang).toEqual([]);
    }
  });

  it('has the languages download managers are asked for, each saying which way it is written', () => {
    expect(languages()).toEqual(expect.arrayContaining(['de', 'en', 'es', 'fa', 'pt_BR', 'ru', 'zh_CN']));
    for (const lang of languages()) {
      const tag = load(lang).languageTag!.message;
      expect(Intl.getCanonicalLocales(tag)[0], lang).toBe(lang.replace('_', '-'));
      // What CLDR says of the language (Node 20 has the getter, later versions the method).
      const locale = new Intl.Locale(tag) as Intl.Locale & { getTextInfo?(): TextInfo; textInfo?: TextInfo };
      expect(load(lang).textDirection?.message, lang).toBe((locale.getTextInfo?.() ?? locale.textInfo)!.direction);
    }
    interface TextInfo {
      direction: 'ltr' | 'rtl';
    }
  });

  it('the pages name no English words outside the locales', () => {
    // A string literal that reads like words (a capital, a space, a letter) is text for people.
    const allowed = [
      // connectionsPerServer's field is being reworked in another branch ("connections per site").
      "'Connections per server'",
    ];
    const found: string[] = [];
    for (const dir of ['src/popup', 'src/options', 'src/player', 'src/pages-shared', 'src/words']) {
      for (const { path, text } of sources(dir)) {
        const code = text.replace(/^\s*(\/\/|\*|\/\*\*).*$/gm, '');
        for (const [literal] of code.matchAll(/'[A-Z][a-z]+ [a-z][^'\n]*'|`[A-Z][a-z]+ [a-z][^`\n]*`/g)) {
          if (!allowed.includes(literal)) found.push(`${path}: ${literal}`);
        }
      }
    }
    expect(found).toEqual([]);
  });

  it('makes engine clauses into sentences', () => {
    expect(sentence('the server answered 503')).toBe('The server answered 503.');
    expect(sentence('Already one.')).toBe('Already one.');
    expect(sentence('  ')).toBe('');
  });
});
