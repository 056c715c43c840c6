/**
 * The cap for a server: a per-site override (by host name, or a parent domain: `example.org` covers
 * `dl.example.org`), else the default maximum.
 */
export function maxConnectionsFor(url: string, defaultMax: number, perSite: Readonly<Record<string, number>> = {}): number {
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase();
  } catch {
    return defaultMax;
  }
  for (let name = host; name !== ''; name = name.includes('.') ? name.slice(name.indexOf('.') + 1) : '') {
    // Own entries only: a host named like a built-in property ("constructor") is not an override.
    if (Object.hasOwn(perSite, name)) return perSite[name]!;
  }
  return defaultMax;
}
