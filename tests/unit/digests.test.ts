import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  type Digest,
  type DigestAlgorithm,
  bytesToHex,
  decodeBase64,
  digestFromHex,
  normalizeDigestAlgorithm,
  parseLegacyDigest,
  parseReprDigest,
  sameDigest,
} from '../../src/engine/integrity/digests';

const NODE_NAME: Record<DigestAlgorithm, string> = {
  'sha-256': 'sha256',
  'sha-512': 'sha512',
  'sha-1': 'sha1',
  md5: 'md5',
};
const raw = (algorithm: DigestAlgorithm, data = 'hello') => new Uint8Array(createHash(NODE_NAME[algorithm]).update(data).digest());
const b64 = (algorithm: DigestAlgorithm, data = 'hello') => Buffer.from(raw(algorithm, data)).toString('base64');
const hex = (algorithm: DigestAlgorithm, data = 'hello') => Buffer.from(raw(algorithm, data)).toString('hex');
const d = (algorithm: DigestAlgorithm, data = 'hello'): Digest => ({
  algorithm,
  value: raw(algorithm, data),
});

const S256 = b64('sha-256');
const S512 = b64('sha-512');
const S1 = b64('sha-1');
const M5 = b64('md5');

describe('normalizeDigestAlgorithm', () => {
  it.each<[string, DigestAlgorithm | undefined]>([
    ['sha-256', 'sha-256'],
    ['SHA-256', 'sha-256'],
    ['sha256', 'sha-256'],
    [' Sha-512 ', 'sha-512'],
    ['SHA512', 'sha-512'],
    ['sha-1', 'sha-1'],
    ['SHA1', 'sha-1'],
    ['SHA', 'sha-1'],
    ['md5', 'md5'],
    ['MD5', 'md5'],
    ['sha-384', undefined],
    ['sha-224', undefined],
    ['unixsum', undefined],
    ['crc32c', undefined],
    ['', undefined],
    ['toString', undefined],
    ['__proto__', undefined],
  ])('%j → %j', (name, expected) => {
    expect(normalizeDigestAlgorithm(name)).toBe(expected);
  });
});

describe('decodeBase64', () => {
  it('round-trips random bytes of every length remainder', () => {
    for (let n = 0; n < 70; n++) {
      const bytes = new Uint8Array(randomBytes(n));
      const text = Buffer.from(bytes).toString('base64');
      expect(decodeBase64(text)).toEqual(bytes);
      expect(decodeBase64(text.replace(/=+$/, ''))).toEqual(bytes); // unpadded
    }
  });

  it.each([
    ['', []],
    ['AA==', [0]],
    ['AAE=', [0, 1]],
    ['/+8=', [0xff, 0xef]],
    ['AB==', [0]], // non-zero pad bits are tolerated (RFC 8941 §4.2.7)
  ])('decodes %j', (text, bytes) => {
    expect(decodeBase64(text)).toEqual(new Uint8Array(bytes));
  });

  it.each(['A', 'AAAAA', 'AA=', 'A===', '====', '=', 'AA=A', 'A A=', 'AA\n==', '-_8=', 'AA==AA==', 'é'])('rejects %j', (text) => {
    expect(decodeBase64(text)).toBeUndefined();
  });
});

describe('parseReprDigest', () => {
  it.each<[string, Digest[]]>([
    [`sha-256=:${S256}:`, [d('sha-256')]],
    [`sha-256=:${S256}:, sha-512=:${S512}:`, [d('sha-256'), d('sha-512')]],
    [`sha-512=:${S512}:,sha-256=:${S256}:`, [d('sha-512'), d('sha-256')]],
    [`  sha-256=:${S256}:  ,\t sha-512=:${S512}:  `, [d('sha-256'), d('sha-512')]],
    [`sha-256=:${S256.replace(/=+$/, '')}:`, [d('sha-256')]], // unpadded
    [`sha-256=:${S256}:;a=1;b;c="x";d=:AA==:;e=?0;f=tok`, [d('sha-256')]], // params ignored
    [`md5=:${M5}:, sha=:${S1}:`, [d('md5'), d('sha-1')]],
    // Unknown algorithms, non-byte-sequence values and wrong lengths are left out.
    [`unixsum=:AAAA:, sha-256=:${S256}:`, [d('sha-256')]],
    [`id-sha-256=:${S256}:, sha-512=:${S512}:`, [d('sha-512')]],
    [`sha-256=:${M5}:, sha-512=:${S512}:`, [d('sha-512')]],
    [`sha-512=:${S256}:`, []],
    ['sha-256=123', []],
    ['sha-256=-1.5', []],
    ['sha-256="abc"', []],
    ['sha-256=token/x:y', []],
    ['sha-256=?1', []],
    ['sha-256', []],
    ['sha-256;p=1', []],
    ['sha-256=@1659578233', []],
    ['sha-256=%"caf%c3%a9"', []],
    [`sha-256=(:${S256}: :${S256}:);x=1`, []],
    ['sha-256=()', []],
    [`*other=:AA==:, sha-256=:${S256}:`, [d('sha-256')]],
    // Duplicate keys: the last value wins.
    [`sha-256=:${b64('sha-256', 'old')}:, sha-256=:${S256}:`, [d('sha-256')]],
    [`sha-256=:${S256}:, sha-256=1`, []],
    ['', []],
    ['   ', []],
  ])('parses %j', (value, expected) => {
    expect(parseReprDigest(value)).toEqual(expected);
  });

  it.each([
    null,
    `SHA-256=:${S256}:`, // keys are lower-case in structured fields
    `sha-256=:${S256}`,
    `sha-256=${S256}:`,
    `sha-256=:${S256.slice(0, 10)}!${S256.slice(10)}:`,
    `sha-256=:${S256.slice(0, 10)} ${S256.slice(10)}:`,
    `sha-256=:${S256}:,`,
    `sha-256=:${S256}:, `,
    `,sha-256=:${S256}:`,
    `sha-256=:${S256}: sha-512=:${S512}:`,
    `sha-256=:${S256}:;`,
    `sha-256=:${S256}:;=1`,
    `sha-256 =:${S256}:`,
    `sha-256= :${S256}:`,
    `sha-256=:${S256}:,,sha-512=:${S512}:`,
    'sha-256=:AA=:',
    'sha-256=:A:',
    'sha-256="unterminated',
    'sha-256="bad\\escape"',
    'sha-256=(:AA==:',
    'sha-256=(:AA==:x)',
    'sha-256=1234567890123456',
    'sha-256=1.2345',
    'sha-256=?2',
    '1sha=:AA==:',
    `sha-256=:${S256}:garbage`,
  ])('rejects %j', (value) => {
    expect(parseReprDigest(value)).toBeUndefined();
  });
});

describe('parseLegacyDigest', () => {
  it.each<[string, Digest[]]>([
    [`SHA-256=${S256}`, [d('sha-256')]],
    [`sha-256=${S256}`, [d('sha-256')]],
    [`Sha-512=${S512}`, [d('sha-512')]],
    [`SHA=${S1}`, [d('sha-1')]],
    [`MD5=${M5}, SHA-256=${S256}`, [d('md5'), d('sha-256')]],
    [`  MD5 = ${M5} ,SHA-256=${S256}  `, [d('md5'), d('sha-256')]],
    [`SHA-256="${S256}"`, [d('sha-256')]],
    [`SHA-256=${S256.replace(/=+$/, '')}`, [d('sha-256')]],
    [`UNIXsum=30637, SHA-256=${S256}`, [d('sha-256')]],
    [`garbage, SHA-256=${S256}, =x, MD5=`, [d('sha-256')]],
    [`MD5=${hex('md5')}`, []], // hex is not base64 of 16 bytes
    [`SHA-256=${M5}`, []],
    [`SHA-256=${S256.slice(1)}`, []],
    [`SHA-256=a b`, []],
    ['', []],
  ])('parses %j', (value, expected) => {
    expect(parseLegacyDigest(value)).toEqual(expected);
  });

  it('is undefined without a header', () => {
    expect(parseLegacyDigest(null)).toBeUndefined();
  });
});

describe('digestFromHex', () => {
  it.each<[string, string, DigestAlgorithm]>([
    ['sha-256', hex('sha-256'), 'sha-256'],
    ['SHA-256', hex('sha-256').toUpperCase(), 'sha-256'],
    ['sha256', `\n   ${hex('sha-256')}\n  `, 'sha-256'],
    ['sha-512', hex('sha-512'), 'sha-512'],
    ['sha-1', hex('sha-1'), 'sha-1'],
    ['md5', hex('md5'), 'md5'],
  ])('%s %s', (algorithm, text, expected) => {
    expect(digestFromHex(algorithm, text)).toEqual(d(expected));
  });

  it.each([
    ['sha-256', hex('sha-1')],
    ['sha-256', hex('sha-256').slice(1)],
    ['sha-256', `${hex('sha-256')}00`],
    ['sha-256', `${hex('sha-256').slice(2)}zz`],
    ['sha-256', hex('sha-256').replace(/(.{8})/, '$1 ')],
    ['sha-256', `0x${hex('sha-256').slice(2)}`],
    ['sha-256', ''],
    ['sha-384', '00'.repeat(48)],
    ['crc32', '00000000'],
  ])('rejects %s %j', (algorithm, text) => {
    expect(digestFromHex(algorithm, text)).toBeUndefined();
  });

  it('round-trips through bytesToHex', () => {
    expect(bytesToHex(digestFromHex('sha-256', hex('sha-256'))!.value)).toBe(hex('sha-256'));
  });
});

describe('comparing digests', () => {
  it.each<[string, Digest, Digest, boolean]>([
    ['same', d('sha-256'), d('sha-256'), true],
    ['other value', d('sha-256'), d('sha-256', 'x'), false],
    ['other algorithm', d('sha-256'), { algorithm: 'sha-512', value: raw('sha-256') }, false],
    ['other length', d('md5'), { algorithm: 'md5', value: raw('md5').slice(1) }, false],
  ])('sameDigest: %s', (_, a, b, expected) => {
    expect(sameDigest(a, b)).toBe(expected);
    expect(sameDigest(b, a)).toBe(expected);
  });
});
