/**
 * Byte counts for people. The CLI and the engine's messages use decimal units (1 MB = 10^6
 * bytes); the extension's pages count like the browsers' download lists (binary multiples), with
 * the same scaling (`scaleBytes`).
 */

const UNITS = ['B', 'kB', 'MB', 'GB', 'TB', 'PB'];

/**
 * `bytes` as a value below `base` and the index of its unit (0: bytes, 1: kilo…, up to 5: peta).
 * `shown` rounds a value the way it will be printed, so 999.95 kB, printed as "1000 kB",
 * moves up a unit instead.
 */
export function scaleBytes(bytes: number, base: 1000 | 1024, shown: (value: number) => number): { value: number; unit: number } {
  let value = bytes;
  let unit = 0;
  while (value >= base && unit < UNITS.length - 1) {
    value /= base;
    unit++;
  }
  if (unit > 0 && unit < UNITS.length - 1 && shown(value) >= base) {
    value /= base;
    unit++;
  }
  return { value, unit };
}

/** `0 B`, `999 B`, `1.5 kB`, `12.3 MB`, `1.23 GB`: three significant digits at most. */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) return '–';
  const { value, unit } = scaleBytes(bytes, 1000, (v) => Number(v.toPrecision(3)));
  if (unit === 0) return `${Math.round(value)} B`;
  const digits = value < 10 ? 2 : value < 100 ? 1 : 0;
  return `${trimZeros(value.toFixed(digits))} ${UNITS[unit]}`;
}

function trimZeros(text: string): string {
  return text.includes('.') ? text.replace(/\.?0+$/, '') : text;
}
