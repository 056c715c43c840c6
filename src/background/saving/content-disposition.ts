import { asciiFilename } from './ascii-name';

/**
 * The Content-Disposition of a streamed save (RFC 6266): `attachment`, an ASCII `filename` for
 * old readers and `filename*` (RFC 8187, UTF-8, percent-encoded) with the exact name. The name
 * has already been through sanitizeFilename; quotes, backslashes and controls are still kept out
 * of the quoted fallback, which a header cannot carry.
 */
export function attachmentDisposition(filename: string): string {
  const fallback = asciiFilename(filename);
  const exact = encodeRfc8187(filename);
  return fallback === filename ? `attachment; filename="${fallback}"` : `attachment; filename="${fallback}"; filename*=UTF-8''${exact}`;
}

/** RFC 8187's value-chars: attr-char as is, every other UTF-8 byte as %XX. */
function encodeRfc8187(value: string): string {
  return [...new TextEncoder().encode(value)]
    .map((byte) => {
      const char = String.fromCharCode(byte);
      return /[A-Za-z0-9!#$&+\-.^_`|~]/.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
    })
    .join('');
}
