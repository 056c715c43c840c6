import { describe, expect, it } from 'vitest';
import { readResponseFacts } from '../../src/engine/http/response-facts';
import { isLocalHost, plainHttpRefusal, requestPolicy, sourceRefusal, type TrustScope } from '../../src/engine/http/request-trust';
import { isLocalAddress } from '../../src/engine/http/address-class';
import { advertisedSources, fromMetalinkFile } from '../../src/engine/sources/advertised';
import type { MetalinkFile } from '../../src/engine/sources/metalink';

const scope: TrustScope = {
  primaryUrl: 'https://example.com/pub/file.iso',
  credentials: 'include',
  credentialOrigins: ['https://trusted.example.org'],
  referrer: 'https://example.com/downloads/',
};

describe('requestPolicy', () => {
  it('gives cookies and the referrer to the origin the user chose', () => {
    expect(requestPolicy('https://example.com/other/path?x=1', scope)).toEqual({
      credentials: 'include',
      referrer: 'https://example.com/downloads/',
    });
  });

  it('gives neither to another origin, even of the same host on another port or scheme', () => {
    for (const url of [
      'https://mirror.example.net/file.iso',
      'https://example.com:8443/pub/file.iso',
      'http://example.com/pub/file.iso',
      'https://sub.example.com/f',
    ]) {
      expect(requestPolicy(url, scope), url).toEqual({ credentials: 'omit', referrer: '' });
    }
  });

  it("gives cookies but no referrer to an origin the user's rule allowed", () => {
    expect(requestPolicy('https://trusted.example.org/pub/file.iso', scope)).toEqual({ credentials: 'include', referrer: '' });
  });

  it('passes on a credentials mode that sends nothing anyway', () => {
    expect(requestPolicy('https://example.com/pub/file.iso', { ...scope, credentials: 'same-origin' }).credentials).toBe('same-origin');
  });
});

describe('isLocalHost', () => {
  const host = (url: string) => new URL(url).hostname;
  it.each([
    'http://localhost/',
    'http://LOCALHOST./',
    'http://app.localhost/',
    'http://127.0.0.1/',
    'http://127.1.2.3/',
    'http://2130706433/', // 127.0.0.1 in decimal: the URL parser normalizes it
    'http://0x7f.1/',
    'http://0.0.0.0/',
    'http://10.1.2.3/',
    'http://172.16.0.1/',
    'http://172.31.255.255/',
    'http://192.168.1.1/',
    'http://169.254.169.254/', // cloud metadata
    'http://100.64.0.1/',
    'http://[::1]/',
    'http://[::]/',
    'http://[fd00::1]/',
    'http://[fc12:3456::1]/',
    'http://[fe80::1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://[::ffff:192.168.0.1]/',
    'http://198.18.0.1/', // benchmarking 198.18/15
    'http://198.19.255.255/',
    'http://192.0.0.170/', // IETF protocol assignments (NAT64 discovery)
    'http://224.0.0.251/', // multicast
    'http://240.0.0.1/', // reserved
    'http://255.255.255.255/',
    'http://[::127.0.0.1]/', // IPv4-compatible
    'http://[::10.0.0.1]/',
    'http://[64:ff9b::127.0.0.1]/', // NAT64 around a local IPv4 address
    'http://[64:ff9b::192.168.1.1]/',
    'http://[64:ff9b::169.254.169.254]/',
    'http://[64:ff9b:1::1]/', // local-use NAT64
    'http://[2002:7f00:1::1]/', // 6to4 around 127.0.0.1
    'http://[2002:c0a8:101::]/', // 6to4 around 192.168.1.1
    'http://[2002:a9fe:a9fe:1:2:3:4:5]/',
    'http://[fec0::1]/', // site-local
    'http://[ff02::1]/', // multicast
  ])('%s is local', (url) => expect(isLocalHost(host(url))).toBe(true));

  it.each([
    'http://example.com/',
    'http://localhost.example.com/',
    'http://8.8.8.8/',
    'http://172.32.0.1/',
    'http://172.15.0.1/',
    'http://192.169.0.1/',
    'http://100.128.0.1/',
    'http://[2001:db8::1]/',
    'http://[::ffff:8.8.8.8]/',
    'http://198.17.255.255/',
    'http://198.20.0.1/',
    'http://198.51.100.1/', // documentation: routed nowhere, so nobody's own network
    'http://192.0.1.1/',
    'http://223.255.255.255/',
    'http://[::8.8.8.8]/',
    'http://[64:ff9b::8.8.8.8]/',
    'http://[64:ff9b::1:7f00:1]/', // outside 64:ff9b::/96
    'http://[2002:808:808::1]/', // 6to4 around 8.8.8.8
    'http://[2003:7f00:1::1]/',
  ])('%s is not', (url) => expect(isLocalHost(host(url))).toBe(false));

  // Addresses as name resolution gives them to the CLI's client: no brackets, dotted IPv4 tails, zones.
  it.each(['127.0.0.2', '10.0.0.1', '::1', '::ffff:127.0.0.1', '::127.0.0.1', '64:ff9b::10.1.2.3', 'FE80::1%eth0', '0:0:0:0:0:0:0:1'])(
    'the address %s is local',
    (address) => expect(isLocalAddress(address)).toBe(true),
  );
  it.each(['198.51.100.1', '8.8.8.8', '2606:4700::1111', '::ffff:8.8.8.8', 'example.com', '127.0.0.256', '1::2::3', '12345::1', '1g::'])(
    '%s is not a local address',
    (address) => expect(isLocalAddress(address)).toBe(false),
  );
});

describe('sourceRefusal', () => {
  it('refuses a local or private mirror of a public file, saying why', () => {
    expect(sourceRefusal('http://127.0.0.1:8080/file.iso', 'https://example.com/file.iso', { covered: true })).toBe(
      'http://127.0.0.1:8080/file.iso is on a local or private network address, and the download is not',
    );
    expect(sourceRefusal('http://192.168.1.1/admin', 'https://example.com/file.iso', { covered: true })).toMatch(/local or private/);
    expect(sourceRefusal('http://[::1]/x', 'https://example.com/file.iso', { covered: true })).toMatch(/local or private/);
  });

  it('accepts local mirrors of a local file, and public mirrors of anything', () => {
    expect(sourceRefusal('http://localhost:9000/file.iso', 'http://127.0.0.1:8080/file.iso', { covered: true })).toBeUndefined();
    expect(sourceRefusal('http://10.0.0.5/file.iso', 'http://192.168.1.2/file.iso', { covered: true })).toBeUndefined();
    expect(sourceRefusal('https://mirror.example.org/file.iso', 'http://127.0.0.1/file.iso', { covered: true })).toBeUndefined();
  });

  it('refuses a plain-http source of an https download unless digests cover the file', () => {
    expect(sourceRefusal('http://mirror.example.org/file.iso', 'https://example.com/file.iso', { covered: false })).toBe(
      'http://mirror.example.org/file.iso is plain http and the download is https; without a digest of the file, bytes from it could be changed on the way',
    );
    expect(sourceRefusal('http://mirror.example.org/file.iso', 'https://example.com/file.iso', { covered: true })).toBeUndefined();
    expect(sourceRefusal('https://mirror.example.org/file.iso', 'https://example.com/file.iso', { covered: false })).toBeUndefined();
    expect(sourceRefusal('http://mirror.example.org/file.iso', 'http://example.com/file.iso', { covered: false })).toBeUndefined();
    expect(plainHttpRefusal('http://10.0.0.5/file.iso', 'https://10.0.0.1/file.iso')).toMatch(/plain http/);
    expect(plainHttpRefusal('https://10.0.0.5/file.iso', 'https://10.0.0.1/file.iso')).toBeUndefined();
  });

  it('refuses anything but http(s)', () => {
    expect(sourceRefusal('file:///etc/passwd', 'http://127.0.0.1/f', { covered: true })).toBe(
      'file:///etc/passwd is not an http:// or https:// address',
    );
    expect(sourceRefusal('ftp://example.org/f', 'https://example.com/f', { covered: true })).toMatch(/not an http/);
  });
});

describe('advertised sources of a public file', () => {
  const response = (headers: Record<string, string>) => readResponseFacts(new Response(null, { headers }));
  const primary = 'https://example.com/file.iso';

  it('leave out local mirrors and Metalink descriptions, and say so', () => {
    const link = [
      '<https://mirror.example.org/file.iso>; rel=duplicate',
      '<http://127.0.0.1:631/file.iso>; rel=duplicate',
      '<http://intranet.localhost/file.meta4>; rel=describedby; type="application/metalink4+xml"',
      '<https://example.com/file.meta4>; rel=describedby; type="application/metalink4+xml"',
    ].join(', ');
    const facts = response({ 'Repr-Digest': 'sha-256=:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=:', Link: link });
    const found = advertisedSources(facts, link, primary);
    expect(found.mirrors).toEqual(['https://mirror.example.org/file.iso']);
    expect(found.metalinks).toEqual(['https://example.com/file.meta4']);
    expect(found.refused).toHaveLength(2);
    expect(found.refused[0]).toMatch(/127\.0\.0\.1:631.*local or private/);
  });

  it("leave out a Metalink file's local URLs when it describes a public file", () => {
    const file: MetalinkFile = {
      name: 'file.iso',
      hashes: [],
      urls: ['https://mirror.example.org/file.iso', 'http://10.0.0.1/file.iso', 'http://localhost/file.iso'].map((url) => ({ url })),
    };
    const fromPublic = fromMetalinkFile(file, 'the Metalink file', { primaryUrl: primary, covered: true });
    expect(fromPublic.urls).toEqual(['https://mirror.example.org/file.iso']);
    expect(fromPublic.refused).toEqual([
      'http://10.0.0.1/file.iso is on a local or private network address, and the download is not',
      'http://localhost/file.iso is on a local or private network address, and the download is not',
    ]);
    expect(fromMetalinkFile(file, 'the Metalink file', { primaryUrl: 'http://127.0.0.1/file.iso', covered: false }).urls).toHaveLength(3);
  });

  it("keep a Metalink file's plain-http URLs for an https download only when hashes cover the file", () => {
    const urls = ['https://a.example.org/file.iso', 'http://b.example.org/file.iso'].map((url) => ({ url }));
    const bare: MetalinkFile = { name: 'file.iso', hashes: [], urls };
    const hashed: MetalinkFile = { ...bare, hashes: [{ algorithm: 'sha-256', value: new Uint8Array(32) }] };
    const trust = { primaryUrl: 'https://example.com/file.meta4', covered: false };
    expect(fromMetalinkFile(bare, 'the Metalink file', trust).urls).toEqual(['https://a.example.org/file.iso']);
    expect(fromMetalinkFile(bare, 'the Metalink file', trust).refused[0]).toMatch(/^http:\/\/b\.example\.org\/file\.iso is plain http/);
    expect(fromMetalinkFile(hashed, 'the Metalink file', trust).urls).toHaveLength(2);
    expect(fromMetalinkFile(bare, 'the Metalink file', { ...trust, covered: true }).urls).toHaveLength(2);
    // A Metalink file the user has on disk: its URLs as given.
    expect(fromMetalinkFile(bare).urls).toHaveLength(2);
  });

  it('refuse an http Metalink description advertised by an https download, keeping its digest-backed mirrors', () => {
    const link = [
      '<http://mirror.example.org/file.iso>; rel=duplicate',
      '<http://example.com/file.meta4>; rel=describedby; type="application/metalink4+xml"',
    ].join(', ');
    const facts = response({ 'Repr-Digest': 'sha-256=:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=:', Link: link });
    const found = advertisedSources(facts, link, primary);
    expect(found.mirrors).toEqual(['http://mirror.example.org/file.iso']);
    expect(found.metalinks).toEqual([]);
    expect(found.refused).toEqual([
      'http://example.com/file.meta4 is plain http and the download is https; without a digest of the file, bytes from it could be changed on the way',
    ]);
  });
});
