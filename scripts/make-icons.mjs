// Draws Stitch's toolbar icons (a blue rounded square with a white arrow over a dashed seam) as
// PNGs into public/icons/, which the build copies. Run again only to change the drawing.
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { deflateSync } from 'node:zlib';

const OUT = resolve(import.meta.dirname, '../public/icons');
const SIZES = [16, 32, 48, 128];
const BLUE = [31, 111, 235];
const WHITE = [255, 255, 255];

/** Coverage (0–1) of pixel (x, y) of an icon of `size`, by 4×4 supersampling of `inside`. */
function coverage(size, x, y, inside) {
  let hits = 0;
  for (let i = 0; i < 4; i++) for (let j = 0; j < 4; j++) if (inside((x + (i + 0.5) / 4) / size, (y + (j + 0.5) / 4) / size)) hits++;
  return hits / 16;
}

const roundedSquare = (u, v) => {
  const r = 0.22;
  const dx = Math.max(r - u, u - (1 - r), 0);
  const dy = Math.max(r - v, v - (1 - r), 0);
  return u >= 0.02 && u <= 0.98 && v >= 0.02 && v <= 0.98 && dx * dx + dy * dy <= (r - 0.02) ** 2;
};
const arrow = (u, v) => {
  const shaft = Math.abs(u - 0.5) < 0.09 && v > 0.16 && v < 0.5;
  const head = v >= 0.42 && v < 0.7 && Math.abs(u - 0.5) < (0.7 - v) * 1.05;
  const seam = v > 0.76 && v < 0.86 && u > 0.2 && u < 0.8 && Math.floor((u - 0.2) / 0.12) % 2 === 0;
  return shaft || head || seam;
};

function png(size) {
  const rows = [];
  for (let y = 0; y < size; y++) {
    const row = Buffer.alloc(1 + size * 4);
    for (let x = 0; x < size; x++) {
      const a = coverage(size, x, y, roundedSquare);
      const w = coverage(size, x, y, (u, v) => roundedSquare(u, v) && arrow(u, v));
      const mix = (c) => Math.round(BLUE[c] * (1 - w / Math.max(a, 1e-9)) + WHITE[c] * (w / Math.max(a, 1e-9)));
      row.set([mix(0), mix(1), mix(2), Math.round(a * 255)], 1 + x * 4);
    }
    rows.push(row);
  }
  const chunk = (type, data) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header.set([8, 6, 0, 0, 0], 8); // 8-bit RGBA
  return Buffer.concat([
    Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(Buffer.concat(rows))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

function crc32(bytes) {
  let crc = ~0;
  for (const byte of bytes) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = (crc >>> 1) ^ (0xedb88320 & -(crc & 1));
  }
  return ~crc >>> 0;
}

for (const size of SIZES) writeFileSync(resolve(OUT, `icon-${size}.png`), png(size));
