import { parseHttpUrl } from '../engine/pages';
import { parsePattern, type MirrorRule } from './schema';

/**
 * The mirror URLs for `url` under the first matching rule: the part of the URL after the
 * rule's path prefix (plus its query) appended to each mirror prefix. The URL itself is not
 * included. Empty when no rule matches.
 */
export function mirrorUrlsFor(url: string, rules: readonly MirrorRule[]): string[] {
  const parsed = parseHttpUrl(url);
  if (!parsed) return [];
  for (const rule of rules) {
    const pattern = parsePattern(rule.pattern);
    if (!pattern || pattern.host !== parsed.host || !parsed.pathname.startsWith(pattern.pathPrefix)) continue;
    const rest = parsed.pathname.slice(pattern.pathPrefix.length) + parsed.search;
    const slash = pattern.pathPrefix.endsWith('/') || rest.startsWith('/');
    return rule.mirrors.map((prefix) => joinPrefix(prefix, rest, slash)).filter((mirror) => mirror !== parsed.href);
  }
  return [];
}

/** Appends `rest` to `prefix`, with exactly one '/' between them at a path boundary. */
function joinPrefix(prefix: string, rest: string, slashBetween: boolean): string {
  if (!slashBetween) return prefix + rest;
  return `${prefix.replace(/\/+$/, '')}/${rest.replace(/^\/+/, '')}`;
}
