import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { t } from '../../../src/pages-shared/i18n';

const LOCALES = resolve(import.meta.dirname, '../../../public/_locales');
const load = (lang: string) => JSON.parse(readFileSync(resolve(LOCALES, lang, 'messages.json'), 'utf8')) as Record<string, { message: string }>;

describe('localisation', () => {
  it('falls back to English outside the extension, with its placeholders filled', () => {
    expect(t('stateRetrying')).toBe('Retrying');
    expect(t('downloadingSummary', '3')).toBe('3 downloading');
  });

  it('every language has every English message, with the same placeholders', () => {
    const en = load('en');
    for (const lang of readdirSync(LOCALES).filter((l) => l !== 'en')) {
      const other = load(lang);
      expect(Object.keys(other).sort(), lang).toEqual(Object.keys(en).sort());
      for (const key of Object.keys(en)) {
        expect(other[key]!.message.match(/\$\w+\$/g), `${lang} ${key}`).toEqual(en[key]!.message.match(/\$\w+\$/g));
      }
    }
  });
});
