import { isLocalHost } from '../engine/http/address-class';

/**
 * Whether Stitch may talk to an aria2 endpoint. The secret token, and the cookies a download
 * carries, travel in every call: over plain http or ws they can be read on the way, so an endpoint
 * that is neither on this machine nor on the user's own network (by its address) needs the user's
 * word that it is theirs (`confirmedPlain`).
 */
export type EndpointVerdict = { ok: true; url: string } | { ok: false; problem: 'not-url' | 'scheme' | 'plain-remote' };

const SCHEMES = new Set(['http:', 'https:', 'ws:', 'wss:']);

export function judgeEndpoint(text: string, confirmedPlain: boolean): EndpointVerdict {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    return { ok: false, problem: 'not-url' };
  }
  if (!SCHEMES.has(url.protocol)) return { ok: false, problem: 'scheme' };
  // aria2 answers JSON-RPC at /jsonrpc; an address given without a path means it.
  if (url.pathname === '/') url.pathname = '/jsonrpc';
  const plain = url.protocol === 'http:' || url.protocol === 'ws:';
  if (plain && !isLocalHost(url.hostname) && !confirmedPlain) return { ok: false, problem: 'plain-remote' };
  return { ok: true, url: url.href };
}
