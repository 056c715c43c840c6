/**
 * Settings files, exported and imported. An exported file never holds a secret: the aria2 token
 * stays in this browser, and so does the user's yes to a plain-http endpoint. An imported file is
 * read within bounds a real one never nears (size, nesting, text and list lengths), checked like a
 * save, and turned into the change it asks for: it cannot carry that yes, and a new aria2 address
 * does not get the token of the old one.
 */
import { formatSize } from '../words/format';
import { formatCount, t } from '../words/i18n';
import { judgeEndpoint } from './aria2-endpoint';
import { DEFAULT_SETTINGS, LIMITS, mergeSettings, validateSettings, type Settings, type SettingsError } from './schema';

export const FILE_LIMITS = {
  /** A full export (every list and rule at its bound) is under 300 KiB. */
  bytes: 1024 * 1024,
  /** Objects and lists inside each other: a mirror rule's mirrors are 3 deep. */
  depth: 8,
  /** One text (a value or a key): an aria2 address takes at most 2,048 characters. */
  textChars: 4096,
  /** Entries of one list or object: the longest lists take 500. */
  entries: LIMITS.listEntries.max,
  /** Problems listed: past these, a count of the rest. */
  problemsShown: 20,
} as const;

/** Never written to a file: the token, and the user's yes to sending it in the clear. */
const KEPT_HERE = ['aria2Secret', 'aria2PlainConfirmed'] as const;

export function exportJson(settings: Settings): string {
  const kept = Object.fromEntries(Object.entries(settings).filter(([key]) => !(KEPT_HERE as readonly string[]).includes(key)));
  return `${JSON.stringify(kept, null, 2)}\n`;
}

export type FileReading = { value: Record<string, unknown> } | { errors: SettingsError[] };

/**
 * The settings a file holds (known fields only, without a yes to a plain-http endpoint), or its
 * problems: the first FILE_LIMITS.problemsShown, and how many more.
 */
export function readSettingsFile(text: string): FileReading {
  const page = (message: string): FileReading => ({ errors: [{ field: '', message }] });
  if (text.length > FILE_LIMITS.bytes) return page(t('errorFileTooLarge', formatSize(FILE_LIMITS.bytes)));
  if (nesting(text) > FILE_LIMITS.depth) return page(t('errorFileTooDeep', formatCount(FILE_LIMITS.depth)));
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return page(t('errorNotJson'));
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return page(t('errorNotObject'));
  const known = new Set(Object.keys(DEFAULT_SETTINGS));
  const value = Object.fromEntries(Object.entries(parsed).filter(([key]) => known.has(key) && key !== 'aria2PlainConfirmed'));
  const oversize = oversized(value, '');
  if (oversize) return { errors: [oversize] };
  // The yes to a plain-http endpoint is the user's to give when the import asks (importInput).
  const errors = validateSettings({ ...value, aria2PlainConfirmed: true });
  if (errors.length === 0) return { value };
  const shown = errors.slice(0, FILE_LIMITS.problemsShown);
  const more = errors.length - shown.length;
  return { errors: more > 0 ? [...shown, { field: '', message: t('errorMoreProblems', formatCount(more)) }] : shown };
}

/**
 * What to store for the settings of a file (`readSettingsFile`'s value), and the plain-http aria2
 * address outside this computer and the local network that it needs the user's yes for, if any.
 * An aria2 address the file changes gets the file's token or none, never the one Stitch has; an
 * address it leaves keeps that one.
 */
export function importInput(current: Settings, file: Record<string, unknown>): { input: Record<string, unknown>; plainEndpoint?: string } {
  const next = mergeSettings(current, file);
  if (endpointOf(next.aria2Url) === endpointOf(current.aria2Url)) {
    // The same aria2 keeps the token the user gave it (an older export's copy of it changes nothing).
    const rest = Object.fromEntries(Object.entries(file).filter(([key]) => key !== 'aria2Secret'));
    return { input: { ...rest, aria2PlainConfirmed: current.aria2PlainConfirmed } };
  }
  const input = { ...file, aria2Secret: typeof file.aria2Secret === 'string' ? file.aria2Secret : '', aria2PlainConfirmed: false };
  const verdict = judgeEndpoint(next.aria2Url, false);
  return !verdict.ok && verdict.problem === 'plain-remote' ? { input, plainEndpoint: next.aria2Url.trim() } : { input };
}

/** The endpoint an address means (`http://host:6800` is `…/jsonrpc`), to tell a changed one. */
function endpointOf(url: string): string {
  const verdict = judgeEndpoint(url, true);
  return verdict.ok ? verdict.url : url.trim();
}

/** The deepest nesting of objects and lists in JSON text (strings skipped), read without parsing. */
function nesting(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash escapes the next character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) deepest = Math.max(deepest, ++depth);
    else if (c === 0x7d || c === 0x5d) depth--;
  }
  return deepest;
}

/** The first list or object with too many entries, or text too long, under `path` (nesting is bounded already). */
function oversized(value: unknown, path: string): SettingsError | undefined {
  const field = path.split('.')[0] ?? '';
  if (typeof value === 'string') {
    return value.length > FILE_LIMITS.textChars
      ? { field, message: t('errorFileLongText', formatCount(FILE_LIMITS.textChars)) }
      : undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const entries = Object.entries(value);
  if (entries.length > FILE_LIMITS.entries) return { field, message: t('errorTooMany', formatCount(FILE_LIMITS.entries)) };
  for (const [key, entry] of entries) {
    const problem = oversized(key, path) ?? oversized(entry, path ? `${path}.${key}` : key);
    if (problem) return problem;
  }
  return undefined;
}
