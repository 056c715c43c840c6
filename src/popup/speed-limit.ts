import { LIMITS } from '../settings/schema';
import { KB } from '../words/format';

/** What a download's speed limit field says: a limit, no limit (empty), or something to refuse. */
export type SpeedLimitInput = { kind: 'limit'; bytesPerSecond: number } | { kind: 'none' } | { kind: 'refused' };

/**
 * Reads the field (KB/s, as the options page's limit for all): empty is no limit; a number of
 * KB/s within the settings' bounds (1 KB/s to 1 TB/s) is a limit; anything else (0, −5, letters,
 * 1e20) is refused, and the download keeps the limit it had. The decimal point may be the
 * language's (`decimal`: "," in German, "٫" in Persian) or "."; digits may be Persian or Arabic.
 */
export function parseSpeedLimit(text: string, decimal = '.'): SpeedLimitInput {
  // Persian and Arabic digits read as the digits they are.
  const trimmed = text.replace(/\s/g, '').replace(/[۰-۹٠-٩]/g, (digit) => String(digit.charCodeAt(0) & 0xf));
  if (trimmed === '') return { kind: 'none' };
  const plain = decimal === '.' ? trimmed : trimmed.replace(decimal, '.');
  if (!/^\d+(\.\d*)?$|^\.\d+$/.test(plain)) return { kind: 'refused' };
  const bytesPerSecond = Math.round(Number(plain) * KB);
  const { min, max } = LIMITS.speedLimitBytesPerSec;
  return bytesPerSecond >= min && bytesPerSecond <= max ? { kind: 'limit', bytesPerSecond } : { kind: 'refused' };
}

/** The field's text for a limit in bytes/s: KB/s with at most two decimals, in the language's digits' decimal point. */
export function speedLimitField(bytesPerSecond: number | undefined, decimal = '.'): string {
  if (bytesPerSecond === undefined) return '';
  return String(Math.round((bytesPerSecond / KB) * 100) / 100).replace('.', decimal);
}
