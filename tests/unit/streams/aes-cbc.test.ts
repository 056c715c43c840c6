import { createCipheriv, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AesCbc, sequenceIv } from '../../../src/engine/streams/aes-cbc';

const KEY = Buffer.from('000102030405060708090a0b0c0d0e0f', 'hex');
const IV = Buffer.from('0f0e0d0c0b0a09080706050403020100', 'hex');

/** A segment as HLS encrypts it: AES-128-CBC with PKCS#7 padding (Node's own cipher). */
function encrypt(plain: Uint8Array): Buffer {
  const cipher = createCipheriv('aes-128-cbc', KEY, IV);
  return Buffer.concat([cipher.update(plain), cipher.final()]);
}

const bytes = (buffer: Buffer) => new Uint8Array(buffer);

describe('AES-128-CBC from any block', () => {
  it('decrypts a middle run of blocks with the block before it as the IV, padding left alone', async () => {
    const plain = randomBytes(16 * 20 + 5);
    const cipher = encrypt(plain);
    const aes = await AesCbc.fromHex(KEY.toString('hex'));
    expect(Buffer.from(await aes.decryptBlocks(bytes(cipher.subarray(0, 64)), bytes(IV)))).toEqual(plain.subarray(0, 64));
    const middle = await aes.decryptBlocks(bytes(cipher.subarray(16 * 7, 16 * 12)), bytes(cipher.subarray(16 * 6, 16 * 7)));
    expect(Buffer.from(middle)).toEqual(plain.subarray(16 * 7, 16 * 12));
  });

  it('reads the padding of the last block, and refuses a wrong key', async () => {
    for (const length of [0, 1, 15, 16, 17, 31]) {
      const cipher = encrypt(randomBytes(length));
      const before = cipher.length === 16 ? IV : cipher.subarray(cipher.length - 32, cipher.length - 16);
      const aes = await AesCbc.fromHex(KEY.toString('hex'));
      expect(await aes.paddingOf(bytes(cipher.subarray(cipher.length - 16)), bytes(before))).toBe(cipher.length - length);
    }
    const cipher = encrypt(Buffer.alloc(40, 7));
    const wrong = await AesCbc.fromHex('ffffffffffffffffffffffffffffffff');
    expect(await wrong.paddingOf(bytes(cipher.subarray(32)), bytes(cipher.subarray(16, 32)))).toBeUndefined();
  });

  it('makes the IV of a segment without one from its media sequence number', () => {
    expect(sequenceIv(0)).toBe('00000000000000000000000000000000');
    expect(sequenceIv(258)).toBe('00000000000000000000000000000102');
  });
});
