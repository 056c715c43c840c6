/** Writing ISO BMFF (MP4) boxes: the MSE route's remuxers build init segments and fragments with these. */

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
