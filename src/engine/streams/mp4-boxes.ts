/**
 * Reading and writing ISO BMFF (MP4) boxes: the player's remuxers read movies and build init
 * segments and fragments with these, a stream's muxer (fmp4-mux.ts) its joined init.
 */

export interface Box {
  type: string;
  /** Absolute offset of the box. */
  start: number;
  /** Absolute offset after it. */
  end: number;
  /** Absolute offset of its payload. */
  data: number;
}

/** The box at `pos` of `bytes` (whose byte 0 is at absolute `base`), or undefined if cut off. */
export function readBoxHeader(bytes: Uint8Array, pos: number, base = 0, fileSize = Infinity): Box | undefined {
  if (pos + 8 > bytes.length) return undefined;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let size = view.getUint32(pos);
  const type = String.fromCharCode(bytes[pos + 4]!, bytes[pos + 5]!, bytes[pos + 6]!, bytes[pos + 7]!);
  let headerLength = 8;
  if (size === 1) {
    if (pos + 16 > bytes.length) return undefined;
    size = Number(view.getBigUint64(pos + 8));
    headerLength = 16;
  } else if (size === 0) {
    size = fileSize - (base + pos); // to the end of the file
  }
  if (size < headerLength) throw new Error(`bad MP4 box ${type} at byte ${base + pos}`);
  return { type, start: base + pos, end: base + pos + size, data: base + pos + headerLength };
}

/** The child boxes of [start, end) within `bytes` (absolute offsets, bytes[0] at `base`). */
export function children(bytes: Uint8Array, start: number, end: number, base = 0): Box[] {
  const boxes: Box[] = [];
  for (let pos = start; pos < end;) {
    const box = readBoxHeader(bytes, pos - base, base);
    if (!box || box.end > base + bytes.length) break;
    boxes.push(box);
    pos = box.end;
  }
  return boxes;
}

export function box(type: string, ...parts: Uint8Array[]): Uint8Array {
  const payload = concat(parts);
  const out = new Uint8Array(8 + payload.length);
  new DataView(out.buffer).setUint32(0, out.length);
  for (let i = 0; i < 4; i++) out[4 + i] = type.charCodeAt(i);
  out.set(payload, 8);
  return out;
}

export function fullBox(type: string, version: number, flags: number, ...parts: Uint8Array[]): Uint8Array {
  return box(type, u32((version << 24) | flags), ...parts);
}

/** Big-endian 32-bit fields (negative values in two's complement). */
export function u32(...values: number[]): Uint8Array {
  const out = new Uint8Array(4 * values.length);
  const view = new DataView(out.buffer);
  values.forEach((v, i) => view.setUint32(4 * i, v >>> 0));
  return out;
}

export function u16(...values: number[]): Uint8Array {
  const out = new Uint8Array(2 * values.length);
  const view = new DataView(out.buffer);
  values.forEach((v, i) => view.setUint16(2 * i, v));
  return out;
}

/** A 64-bit field (a decode time), from a number below 2^53. */
export function u64(value: number): Uint8Array {
  return u32(Math.floor(value / 2 ** 32), value >>> 0);
}

export function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
