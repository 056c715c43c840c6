/**
 * Which addresses are the user's own network: what a public server may never make Stitch reach.
 * Judged on a URL's host name here, and on the address actually connected to where the platform
 * lets Stitch see it (the CLI's client).
 */

/**
 * Loopback, private, link-local, unspecified or shared (CGNAT) addresses, and `localhost` names.
 * `hostname` is as the URL parser leaves it: IPv4 in dotted decimal, IPv6 compressed in brackets.
 */
export function isLocalHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (host.startsWith('[')) return isLocalIpv6(host.slice(1, -1));
  const v4 = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(host);
  return v4 !== null && isLocalIpv4(v4.slice(1).map(Number));
}

function isLocalIpv4([a, b]: number[]): boolean {
  return (
    a === 0 ||
    a === 10 ||
    a === 127 ||
    (a === 100 && b! >= 64 && b! < 128) ||
    (a === 169 && b === 254) ||
    (a === 172 && b! >= 16 && b! < 32) ||
    (a === 192 && b === 168)
  );
}

function isLocalIpv6(address: string): boolean {
  const groups = expandIpv6(address);
  if (!groups) return false;
  if (groups.slice(0, 7).every((g) => g === 0) && groups[7]! <= 1) return true; // :: and ::1
  // IPv4-mapped (::ffff:a.b.c.d, which the parser writes as ::ffff:xxxx:xxxx).
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return isLocalIpv4([groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff]);
  }
  const first = groups[0]!;
  return (first & 0xfe00) === 0xfc00 || (first & 0xffc0) === 0xfe80; // unique local fc00::/7, link-local fe80::/10
}

/** The eight 16-bit groups of a compressed IPv6 address (no embedded IPv4: the URL parser rewrites it). */
function expandIpv6(address: string): number[] | undefined {
  const [head, tail] = address.split('::') as [string, string | undefined];
  const part = (s: string | undefined) => (s ? s.split(':').map((g) => parseInt(g, 16)) : []);
  const left = part(head);
  const right = part(tail);
  const missing = 8 - left.length - right.length;
  if (tail === undefined ? missing !== 0 : missing < 0) return undefined;
  const groups = [...left, ...new Array<number>(missing).fill(0), ...right];
  return groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : undefined;
}
