/**
 * Byte counts for people, in the CLI, the engine's messages and the extension's pages alike:
 * decimal units (1 MB = 10^6 bytes), like the browsers' own download lists.
 */

const UNITS = ['B', 'kB', 'MB', 'GB', 'TB', 'PB'];

/** `0 B`, `999 B`, `1.5 kB`, `12.3 MB`, `1.23 GB`: three significant digits at most. */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) return '–';
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < UNITS.length - 1) {
    value /= 1000;
    unit++;
  }
  if (unit === 0) return `${Math.round(value)} B`;
  // 999.95 kB would print as "1000 kB": move up a unit instead.
  if (Number(value.toPrecision(3)) >= 1000 && unit < UNITS.length - 1) {
    value /= 1000;
    unit++;
  }
  const digits = value < 10 ? 2 : value < 100 ? 1 : 0;
  return `${trimZeros(value.toFixed(digits))} ${UNITS[unit]}`;
}

function trimZeros(text: string): string {
  return text.includes('.') ? text.replace(/\.?0+$/, '') : text;
}
