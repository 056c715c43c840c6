import { sanitizeFilename } from '../../engine';

/**
 * `name` in printable ASCII, which every file system and every header writes: accents dropped
 * (é → e), anything else outside ASCII, `"` and `\` as "_", the extension kept; "download" when
 * nothing is left of the stem. The fallback when a name cannot be written as it is: a streamed
 * save's quoted `filename`, and a save under a locale the system lacks.
 */
export function asciiFilename(name: string): string {
  const ascii = name
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .replace(/[^\x20-\x7e]+|["\\]/g, '_');
  const safe = sanitizeFilename(ascii);
  const dot = safe.lastIndexOf('.');
  const stem = dot > 0 ? safe.slice(0, dot) : safe;
  return /[A-Za-z0-9]/.test(stem) ? safe : `download${dot > 0 ? safe.slice(dot) : ''}`;
}
