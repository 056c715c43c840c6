/** Export and import of settings as files, done in the page (no downloads permission needed). */
import { t } from '../words/i18n';
import type { MirrorRule } from '../settings/schema';

/** Offers `json` as a file download through a blob URL, then frees the URL. */
export function downloadJson(json: string, filename: string): void {
  const url = URL.createObjectURL(new Blob([json], { type: 'application/json' }));
  const link = Object.assign(document.createElement('a'), { href: url, download: filename });
  link.style.display = 'none';
  document.body.append(link);
  link.click();
  link.remove();
  // The download has its own reference once started; give it a moment before revoking.
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** `stitch-settings-2024-05-01.json` */
export function exportFilename(now = new Date()): string {
  return `stitch-settings-${now.toISOString().slice(0, 10)}.json`;
}

/** Parses imported text; a syntax error becomes the one problem to show (the parser's own words are English). */
export function parseImport(text: string): { value?: unknown; error?: string } {
  try {
    return { value: JSON.parse(text) };
  } catch {
    return { error: t('errorNotJson') };
  }
}

/** One way an import lets Stitch send more, to more places, under the mirror rule of `pattern`. */
export interface TrustChange {
  pattern: string;
  /** A new rule, new mirrors of a rule, or cookies or the URL's query now sent to mirrors. */
  kind: 'new-rule' | 'new-mirrors' | 'send-cookies' | 'pass-query';
  /** The mirror prefixes it concerns. */
  mirrors: string[];
}

/**
 * What settings with the mirror rules `next` would send where the current `rules` do not: new
 * rules (by pattern) and new mirrors, which get requests for the files the rule matches, and
 * cookies or the URL's query (often a signed token) passed to mirrors that did not get them.
 * Sending less (a rule or mirror gone, a box unticked) needs no asking.
 */
export function trustChanges(rules: readonly MirrorRule[], next: readonly MirrorRule[]): TrustChange[] {
  return next.flatMap((rule) => {
    const before = rules.find((r) => r.pattern === rule.pattern);
    const added = before ? rule.mirrors.filter((mirror) => !before.mirrors.includes(mirror)) : rule.mirrors;
    // Turned on: every mirror gets it; on before: the new mirrors do.
    const gaining = (on: boolean, wasOn = false) => (on ? (wasOn ? added : rule.mirrors) : []);
    const changes: TrustChange[] = [
      { pattern: rule.pattern, kind: before ? 'new-mirrors' : 'new-rule', mirrors: added },
      { pattern: rule.pattern, kind: 'send-cookies', mirrors: gaining(rule.sendCookies, before?.sendCookies) },
      { pattern: rule.pattern, kind: 'pass-query', mirrors: gaining(rule.passQuery, before?.passQuery) },
    ];
    return changes.filter((change) => change.mirrors.length > 0);
  });
}
