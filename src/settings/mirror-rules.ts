import { parseHttpUrl } from '../engine/pages';
import { parsePattern, type MirrorRule } from './schema';

/**
 * The mirror URLs for `url` under the first matching rule: the part of the URL after the
 * rule's path prefix (plus its query, if the rule passes it) appended to each mirror prefix. The
 * URL itself is not included. Empty when no rule matches.
 */
export function mirrorUrlsFor(url: string, rules: readonly MirrorRule[]): string[] {
  const match = matchRule(url, rules);
  if (!match) return [];
  const { rule, parsed, pathPrefix } = match;
  const rest = parsed.pathname.slice(pathPrefix.length) + (rule.passQuery ? parsed.search : '');
  const slash = pathPrefix.endsWith('/') || rest.startsWith('/');
  return rule.mirrors.map((prefix) => joinPrefix(prefix, rest, slash)).filter((mirror) => mirror !== parsed.href);
}

/** The mirrors' origins that may get the user's cookies for `url`: those of a matching rule that says so. */
export function cookieOriginsFor(url: string, rules: readonly MirrorRule[]): string[] {
  const rule = matchRule(url, rules)?.rule;
  return rule?.sendCookies ? [...new Set(rule.mirrors.map((prefix) => new URL(prefix).origin))] : [];
}

function matchRule(url: string, rules: readonly MirrorRule[]): { rule: MirrorRule; parsed: URL; pathPrefix: string } | undefined {
  const parsed = parseHttpUrl(url);
  if (!parsed) return undefined;
  for (const rule of rules) {
    const pattern = parsePattern(rule.pattern);
    if (pattern && pattern.host === parsed.host && parsed.pathname.startsWith(pattern.pathPrefix))
      return { rule, parsed, pathPrefix: pattern.pathPrefix };
  }
  return undefined;
}

/** Appends `rest` to `prefix`, with exactly one '/' between them at a path boundary. */
function joinPrefix(prefix: string, rest: string, slashBetween: boolean): string {
  if (!slashBetween) return prefix + rest;
  return `${prefix.replace(/\/+$/, '')}/${rest.replace(/^\/+/, '')}`;
}
