/**
 * Which addresses are the user's own network: what a public server may never make Stitch reach.
 * Judged on a URL's host name here, and on the address actually connected to where the platform
 * lets Stitch see it (the CLI's client).
 *
 * Local: loopback, private, link-local, unspecified, shared (CGNAT), benchmarking (198.18/15) and
 * IETF protocol (192.0.0/24) addresses; IPv6 addresses that carry a local IPv4 one (IPv4-mapped,
 * IPv4-compatible, NAT64 64:ff9b::/96, 6to4 2002::/16) and the local-use NAT64 prefix
 * 64:ff9b:1::/48, which lead to it through a translator or tunnel; site-local fec0::/10
 * (deprecated, still routed by some networks). Multicast (224/4, ff00::/8), reserved 240/4 and
 * the broadcast address count as local too: no server is there over TCP, so refusing them costs
 * nothing, and a stack may deliver them on the local link. Documentation ranges (192.0.2/24,
 * 2001:db8::/32, ...) stay public: they are routed nowhere, so they are nobody's own network.
 */

/**
 * Whether a URL's host is local: a local address, or a `localhost` name.
 * `hostname` is as the URL parser leaves it: IPv4 in dotted decimal, IPv6 compressed in brackets.
 */
export function isLocalHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (host.startsWith('[')) return isLocalAddress(host.slice(1, -1));
  return ipv4Octets(host) !== undefined && isLocalAddress(host);
}

/**
 * Whether an IPv4 or IPv6 address, as name resolution or a socket gives it (`127.0.0.2`,
 * `::ffff:10.0.0.1`, `fe80::1%eth0`, no brackets), is local. Anything else is not an address: false.
 */
export function isLocalAddress(address: string): boolean {
  const v4 = ipv4Octets(address);
  if (v4) return isLocalIpv4(v4);
  const groups = ipv6Groups(address.toLowerCase().replace(/%.*$/, ''));
  return groups !== undefined && isLocalIpv6(groups);
}

function isLocalIpv4([a, b, c]: number[]): boolean {
  return (
    a === 0 || // "this network"
    a === 10 ||
    a === 127 ||
    a! >= 224 || // multicast, reserved, broadcast
    (a === 100 && b! >= 64 && b! < 128) || // shared (CGNAT)
    (a === 169 && b === 254) ||
    (a === 172 && b! >= 16 && b! < 32) ||
    (a === 192 && b === 168) ||
    (a === 192 && b === 0 && c === 0) || // IETF protocol assignments (DS-Lite, NAT64 discovery)
    (a === 198 && (b === 18 || b === 19)) // benchmarking
  );
}

function isLocalIpv6(groups: number[]): boolean {
  const [g0, g1, g2] = groups as [number, number, number];
  const zero = (from: number, to: number) => groups.slice(from, to).every((g) => g === 0);
  /** The IPv4 address in two 16-bit groups. */
  const v4 = (high: number, low: number) => isLocalIpv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
  // ::/96 (unspecified, loopback, IPv4-compatible ::a.b.c.d) and IPv4-mapped ::ffff:a.b.c.d.
  if (zero(0, 5) && (groups[5] === 0 || groups[5] === 0xffff)) return v4(groups[6]!, groups[7]!);
  if (g0 === 0x64 && g1 === 0xff9b) return g2 === 1 || (zero(2, 6) && v4(groups[6]!, groups[7]!)); // NAT64
  if (g0 === 0x2002) return v4(g1, g2); // 6to4
  // Unique local fc00::/7, link-local fe80::/10 and site-local fec0::/10, multicast ff00::/8.
  return (g0 & 0xfe00) === 0xfc00 || (g0 & 0xff80) === 0xfe80 || (g0 & 0xff00) === 0xff00;
}

/** The four octets of a dotted-decimal IPv4 address. */
function ipv4Octets(text: string): number[] | undefined {
  const match = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  const octets = match?.slice(1).map(Number);
  return octets?.every((o) => o <= 255) ? octets : undefined;
}

/** The eight 16-bit groups of an IPv6 address, compressed or not, with or without a dotted IPv4 tail. */
function ipv6Groups(address: string): number[] | undefined {
  const tail = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(address);
  let text = address;
  if (tail) {
    const octets = ipv4Octets(tail[2]!);
    if (!octets) return undefined;
    text = `${tail[1]}${((octets[0]! << 8) | octets[1]!).toString(16)}:${((octets[2]! << 8) | octets[3]!).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const part = (s: string | undefined) => (s ? s.split(':') : []);
  const left = part(halves[0]);
  const right = part(halves[1]);
  const missing = 8 - left.length - right.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const groups = [...left, ...new Array<string>(missing).fill('0'), ...right];
  return groups.every((g) => /^[0-9a-f]{1,4}$/.test(g)) ? groups.map((g) => parseInt(g, 16)) : undefined;
}
