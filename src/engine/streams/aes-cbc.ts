import { hexToBytes } from '../integrity/digests';
import { AES_BLOCK } from './stream-layout';

/**
 * HLS's AES-128 (clear key, CBC, PKCS#7) with Web Crypto, which only decrypts whole messages and
 * always strips their padding. A range of a segment is decrypted from any block boundary: the
 * block before it is its IV, and one sealed block appended (the padding encrypted after the last
 * block) gives Web Crypto the padding it strips, so exactly the asked blocks come out.
 */
export class AesCbc {
  private constructor(private readonly key: CryptoKey) {}

  static async fromHex(hex: string): Promise<AesCbc> {
    const raw = hexToBytes(hex);
    if (raw?.length !== AES_BLOCK) throw new Error('an AES-128 key has 16 bytes');
    return new AesCbc(await crypto.subtle.importKey('raw', raw, 'AES-CBC', false, ['encrypt', 'decrypt']));
  }

  /** The plaintext of whole blocks `cipher`, the block before them being `iv`; no padding is removed. */
  async decryptBlocks(cipher: Uint8Array<ArrayBuffer>, iv: Uint8Array<ArrayBuffer>): Promise<Uint8Array<ArrayBuffer>> {
    if (cipher.length === 0) return cipher;
    if (cipher.length % AES_BLOCK !== 0) throw new Error('AES-CBC decrypts whole 16-byte blocks');
    const last = cipher.slice(cipher.length - AES_BLOCK);
    const padding = new Uint8Array(AES_BLOCK).fill(AES_BLOCK);
    const sealed = new Uint8Array(await crypto.subtle.encrypt({ name: 'AES-CBC', iv: last }, this.key, padding));
    const input = new Uint8Array(cipher.length + AES_BLOCK);
    input.set(cipher);
    input.set(sealed.subarray(0, AES_BLOCK), cipher.length);
    return new Uint8Array(await crypto.subtle.decrypt({ name: 'AES-CBC', iv }, this.key, input));
  }

  /**
   * How many bytes of PKCS#7 padding end a message whose last block is `lastBlock`, the block
   * before it `iv`; undefined when the padding is not valid (a wrong key, or other bytes).
   */
  async paddingOf(lastBlock: Uint8Array<ArrayBuffer>, iv: Uint8Array<ArrayBuffer>): Promise<number | undefined> {
    return pkcs7Padding(await this.decryptBlocks(lastBlock, iv));
  }
}

/** How many bytes of PKCS#7 padding end `plain` (whole blocks decrypted); undefined when it is not valid padding. */
export function pkcs7Padding(plain: Uint8Array): number | undefined {
  const pad = plain[plain.length - 1];
  if (pad === undefined || pad < 1 || pad > AES_BLOCK || pad > plain.length) return undefined;
  return plain.subarray(plain.length - pad).every((byte) => byte === pad) ? pad : undefined;
}

/** HLS's IV when the playlist gives none: the segment's media sequence number, big-endian in 16 bytes. */
export function sequenceIv(sequence: number): string {
  return sequence.toString(16).padStart(32, '0');
}
