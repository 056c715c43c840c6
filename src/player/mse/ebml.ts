/**
 * EBML (the binary format of Matroska and WebM): element IDs and sizes are variable-length
 * integers whose first byte tells their length by its leading zero bits.
 */

/** A size whose every value bit is 1 means "unknown" (live streams, open Segments). */
export const UNKNOWN_SIZE = -1;

export interface ElementHeader {
  /** The ID with its length marker bits kept, as the spec writes IDs (0x1A45DFA3). */
  id: number;
  /** Bytes of data after the header, or UNKNOWN_SIZE. */
  size: number;
  /** Bytes of ID plus size. */
  headerLength: number;
}

/** Length in bytes of the vint starting with `first`, or 0 if it is not a valid vint start. */
function vintLength(first: number): number {
  for (let length = 1; length <= 8; length++) if (first & (0x80 >> (length - 1))) return length;
  return 0;
}

/**
 * Reads the element header at `pos`, or undefined when `bytes` ends before it does.
 * Throws on bytes that are not EBML.
 */
export function readElementHeader(bytes: Uint8Array, pos: number): ElementHeader | undefined {
  if (pos >= bytes.length) return undefined;
  const idLength = vintLength(bytes[pos]!);
  if (idLength === 0 || idLength > 4) throw new Error(`not an EBML element ID at byte ${pos}`);
  if (pos + idLength >= bytes.length) return undefined;
  let id = 0;
  for (let i = 0; i < idLength; i++) id = id * 256 + bytes[pos + i]!;
  const sizePos = pos + idLength;
  const sizeLength = vintLength(bytes[sizePos]!);
  if (sizeLength === 0) throw new Error(`not an EBML size at byte ${sizePos}`);
  if (sizePos + sizeLength > bytes.length) return undefined;
  let size = bytes[sizePos]! & (0xff >> sizeLength);
  let allOnes = size === 0xff >> sizeLength;
  for (let i = 1; i < sizeLength; i++) {
    const b = bytes[sizePos + i]!;
    size = size * 256 + b;
    allOnes &&= b === 0xff;
  }
  return { id, size: allOnes ? UNKNOWN_SIZE : size, headerLength: idLength + sizeLength };
}

/** An unsigned integer element's value (big-endian, up to 8 bytes; exact up to 2^53). */
export function readUint(bytes: Uint8Array, start: number, length: number): number {
  let value = 0;
  for (let i = 0; i < length; i++) value = value * 256 + bytes[start + i]!;
  return value;
}

/** A float element's value (4 or 8 bytes). */
export function readFloat(bytes: Uint8Array, start: number, length: number): number {
  const view = new DataView(bytes.buffer, bytes.byteOffset + start, length);
  return length === 4 ? view.getFloat32(0) : length === 8 ? view.getFloat64(0) : 0;
}

export function readString(bytes: Uint8Array, start: number, length: number): string {
  return new TextDecoder().decode(bytes.subarray(start, start + length)).replace(/\0+$/, '');
}

/**
 * Calls `visit` for each child element of [start, end) whose header and data are all within
 * `bytes`; stops at the first one that is cut off, or when `visit` returns false.
 */
export function forEachChild(
  bytes: Uint8Array,
  start: number,
  end: number,
  visit: (header: ElementHeader, dataStart: number) => boolean | void,
): void {
  for (let pos = start; pos < end;) {
    const header = readElementHeader(bytes, pos);
    if (!header || header.size === UNKNOWN_SIZE) return;
    const dataStart = pos + header.headerLength;
    if (dataStart + header.size > bytes.length) return;
    if (visit(header, dataStart) === false) return;
    pos = dataStart + header.size;
  }
}
