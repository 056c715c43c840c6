/**
 * The one settings schema: types, defaults, a loader that never throws (`parseSettings`, used on
 * every load so bad stored settings cannot crash the worker) and a strict checker with readable
 * errors (`validateSettings`, used on save and import by the options page and the background).
 * Its errors are in the user's language (the locales' messages, English outside the browser), with
 * sizes and rates in the options page's units. No other browser API here.
 */

import * as v from 'valibot';
import { DEFAULT_MAX_BLOCK_BYTES, DEFAULT_STALL_SECONDS, MAX_CONNECTIONS_PER_SERVER, parseHttpUrl } from '../engine/pages';
import { KB, MB } from '../words/format';
import { judgeEndpoint } from './aria2-endpoint';
import { formatCount, t, type MessageKey } from '../words/i18n';

export const MIB = 1024 * 1024;

/** Limits every field must respect; the options page can show them as input bounds. */
export const LIMITS = {
  thresholdBytes: { min: 0, max: 1e15 },
  maxConcurrentJobs: { min: 1, max: 10 },
  connectionsPerServer: { min: 1, max: MAX_CONNECTIONS_PER_SERVER },
  connectionsPerSite: { max: 100 },
  stallSeconds: { min: 5, max: 600 },
  blockBytes: { min: 64 * 1024, max: 256 * MIB },
  speedLimitBytesPerSec: { min: 1024, max: 1e12 },
  mirrorRules: { max: 100 },
  mirrorsPerRule: { max: 16 },
  listEntries: { max: 500 },
} as const;

interface Bounds {
  min: number;
  max: number;
}

/** A whole number within `bounds`; one message for every way of missing it. */
function wholeNumber(bounds: Bounds, message: () => string) {
  return v.pipe(
    v.number(message),
    v.check((n) => isWholeNumberWithin(n, bounds), message),
  );
}

function isWholeNumberWithin(n: unknown, bounds: Bounds): n is number {
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= bounds.min && n <= bounds.max;
}

/** "Enter a whole number from 1 to 10." in the page's language (made when shown). */
const wholeNumberWords = (bounds: Bounds) => () => t('errorWholeNumber', formatCount(bounds.min), formatCount(bounds.max));

/**
 * Bounds in bytes as the options page shows them: in MB, KB or KB/s (`unit` bytes), e.g. "Enter a
 * number of MB from 0 to 953,674,316.", never as a raw byte count.
 */
export function boundsInUnits(key: MessageKey, bounds: Bounds, unit: number): string {
  return t(key, formatCount(bounds.min / unit), formatCount(Math.floor(bounds.max / unit)));
}

/** A string put in canonical form by `normalize`; `problem(entry)` when it cannot be. */
function normalized(normalize: (value: string) => string | undefined, problem: (entry: string) => string) {
  const message = (issue: v.BaseIssue<unknown>) => problem(String(issue.input));
  return v.pipe(
    v.string(message),
    v.rawTransform(({ dataset, addIssue, NEVER }) => normalize(dataset.value) ?? (addIssue({ message }), NEVER)),
  );
}

function list<T extends v.GenericSchema>(entry: T, max: number) {
  return v.pipe(
    v.array(entry, () => t('errorNotList')),
    v.maxLength(max, () => t('errorTooMany', formatCount(max))),
  );
}

const MIME_PATTERN = normalized(normalizeMimePattern, (entry) => t('errorNotMime', entry));
const SITE = normalized(normalizeSite, siteProblem);

/**
 * Host → the most connections to it (and its subdomains), overriding `connectionsPerServer`.
 * Checked as a whole so that each problem names its host, and a host given twice is one.
 */
const SITE_CONNECTIONS = v.pipe(
  v.custom<Record<string, unknown>>(isObject, () => t('errorSiteMap')),
  v.rawTransform(({ dataset, addIssue, NEVER }) => {
    const { sites, problems } = readSiteConnections(Object.entries(dataset.value));
    for (const message of problems) addIssue({ message });
    return problems.length > 0 ? NEVER : Object.fromEntries(sites);
  }),
);

const patternMessage = (issue: v.BaseIssue<unknown>) => t('errorNotPattern', typeof issue.input === 'string' ? issue.input : '');
const ruleMessage = () => t('errorRuleShape');
const oneMirrorAtLeast = () => t('errorNoMirror');
const onOff = () => t('errorOnOff');

/** Sends URLs matching `pattern` to the same path under each mirror prefix as well. */
const MIRROR_RULE = v.pipe(
  v.custom<Record<string, unknown>>(isObject, ruleMessage),
  v.object({
    /**
     * Host (with port if not the default) and path prefix, no scheme: `example.com/releases/`.
     * A URL matches when its host equals the host and its path starts with the path prefix.
     */
    pattern: v.optional(
      v.pipe(
        v.string(patternMessage),
        v.check((p) => parsePattern(p) !== undefined, patternMessage),
      ),
      '',
    ),
    /** Absolute http(s) URL prefixes; the part of the URL after the pattern is appended. */
    mirrors: v.optional(
      v.pipe(
        v.array(
          normalized(normalizeMirrorPrefix, (entry) => t('errorNotMirrorPrefix', entry)),
          oneMirrorAtLeast,
        ),
        v.minLength(1, oneMirrorAtLeast),
        v.maxLength(LIMITS.mirrorsPerRule.max, () => t('errorTooMany', formatCount(LIMITS.mirrorsPerRule.max))),
      ),
      () => [],
    ),
    /** Append the URL's query too (it often holds a signed token meant for the original site only). */
    passQuery: v.optional(v.boolean(onOff), false),
    /** Send the browser's cookies for the mirrors' sites with their requests. */
    sendCookies: v.optional(v.boolean(onOff), false),
  }),
);

/** What a size or rate field says when it is out of bounds: in the options page's units (binary, as the pages count). */
export const UNIT_BOUNDS = {
  thresholdBytes: () => boundsInUnits('errorThreshold', LIMITS.thresholdBytes, MB),
  minBlockBytes: () => boundsInUnits('errorMinBlock', LIMITS.blockBytes, KB),
  maxBlockBytes: () => boundsInUnits('errorMaxBlock', LIMITS.blockBytes, KB),
  speedLimitBytesPerSec: () => boundsInUnits('errorSpeedLimit', LIMITS.speedLimitBytesPerSec, KB),
  aria2MinBytes: () => boundsInUnits('errorThreshold', LIMITS.thresholdBytes, MB),
};

/**
 * The one declaration of every setting: its type, its default (the `optional` value) and its
 * check with the words shown to the user. `parseSettings` and `validateSettings` both read it.
 */
const FIELDS = v.object({
  version: v.optional(
    v.literal(1, (issue) => t('errorVersion', String(issue.input))),
    1,
  ),
  /** Take over browser downloads at all. */
  takeover: v.optional(v.boolean(onOff), true),
  /**
   * Take over every download that passes the rules above, not only those Stitch makes faster or safer
   * (mirrors, a digest, an aria2 rule, a host that caps each connection, or a start probe that measured
   * a clear gain). Off by default (issue 27): a download the browser runs at full speed stays with the
   * browser, watched and rescued if it breaks or stalls.
   */
  alwaysTakeOver: v.optional(v.boolean(onOff), false),
  /** Downloads of at least this many bytes (or of unknown size) are taken over. */
  thresholdBytes: v.optional(wholeNumber(LIMITS.thresholdBytes, UNIT_BOUNDS.thresholdBytes), 20 * MIB),
  /** MIME types left to the browser: exact (`application/pdf`) or a family (`video/*`). */
  excludedTypes: v.optional(list(MIME_PATTERN, LIMITS.listEntries.max), () => []),
  /** Hosts left to the browser; a host also covers its subdomains. */
  excludedSites: v.optional(list(SITE, LIMITS.listEntries.max), () => []),
  /** Jobs running at once; the rest wait in the queue. */
  maxConcurrentJobs: v.optional(wholeNumber(LIMITS.maxConcurrentJobs, wholeNumberWords(LIMITS.maxConcurrentJobs)), 3),
  /**
   * The most connections to one server (HTTP/1.1 browsers allow 6): Stitch starts with two and
   * adds more while they make the download faster. 4, not the engine's 16: see DEFAULT_OPTIONS.
   */
  connectionsPerServer: v.optional(wholeNumber(LIMITS.connectionsPerServer, wholeNumberWords(LIMITS.connectionsPerServer)), 4),
  /**
   * Per-site overrides of that maximum (`{ 'downloads.example.com': 1 }`): some sites ban clients
   * that open several connections. A host also covers its subdomains (the engine's maxConnectionsFor).
   */
  connectionsPerSite: v.optional(SITE_CONNECTIONS, () => ({})),
  /**
   * Seconds without a byte before a connection counts as stalled: Stitch's own request is dropped and
   * asked again for the missing bytes, and a download left with the browser is paused and resumed.
   * The engine's default (20 s); a line that often pauses for longer may want more.
   */
  stallSeconds: v.optional(wholeNumber(LIMITS.stallSeconds, wholeNumberWords(LIMITS.stallSeconds)), DEFAULT_STALL_SECONDS),
  /** Bounds of the block size the scheduler may choose. The smallest is 1 MiB, not the engine's 128 KiB: see DEFAULT_OPTIONS. */
  minBlockBytes: v.optional(wholeNumber(LIMITS.blockBytes, UNIT_BOUNDS.minBlockBytes), 1 * MIB),
  maxBlockBytes: v.optional(wholeNumber(LIMITS.blockBytes, UNIT_BOUNDS.maxBlockBytes), DEFAULT_MAX_BLOCK_BYTES),
  /** Overall download rate cap in bytes/s; null: no limit. */
  speedLimitBytesPerSec: v.optional(v.nullable(wholeNumber(LIMITS.speedLimitBytesPerSec, UNIT_BOUNDS.speedLimitBytesPerSec)), null),
  mirrorRules: v.optional(list(MIRROR_RULE, LIMITS.mirrorRules.max), () => []),
  /** A system notification when a download fails (on by default: nobody watches the popup). */
  notifyFailed: v.optional(v.boolean(onOff), true),
  /** A system notification when a download is saved. */
  notifyCompleted: v.optional(v.boolean(onOff), false),
  /**
   * Chrome: the file fills in the download folder while Stitch downloads it, instead of being saved
   * once complete. Off by default: on a 2-core machine it made a 1 GiB download 4–5 % slower end to end
   * (the save's copies compete with the download); see README.
   */
  saveWhileDownloading: v.optional(v.boolean(onOff), false),
  /**
   * An aria2 JSON-RPC endpoint (`http://127.0.0.1:6800/jsonrpc`, or ws, https, wss) that takes downloads
   * handed to it; '' for none. Plain http or ws to an address outside this machine and the local network
   * needs `aria2PlainConfirmed` (the token and cookies travel in every call).
   */
  aria2Url: v.optional(v.pipe(v.string(), v.maxLength(2048)), ''),
  /** aria2's --rpc-secret. */
  aria2Secret: v.optional(v.pipe(v.string(), v.maxLength(1024)), ''),
  /** The user says the plain http or ws endpoint is on their own network. */
  aria2PlainConfirmed: v.optional(v.boolean(onOff), false),
  /** Downloads of at least this many bytes go to aria2 instead of Stitch; null: none by size. */
  aria2MinBytes: v.optional(v.nullable(wholeNumber(LIMITS.thresholdBytes, UNIT_BOUNDS.aria2MinBytes)), null),
  /** Downloads from these hosts (and their subdomains) go to aria2 instead of Stitch. */
  aria2Sites: v.optional(list(SITE, LIMITS.listEntries.max), () => []),
});

export type MirrorRule = v.InferOutput<typeof MIRROR_RULE>;
export type Settings = v.InferOutput<typeof FIELDS>;

export const DEFAULT_SETTINGS: Readonly<Settings> = Object.freeze(v.getDefaults(FIELDS));

/** One problem with one field, in words the options page can show next to it. */
export interface SettingsError {
  /** Dotted path of the field: `connectionsPerServer`, `mirrorRules.0.mirrors.1`. */
  field: string;
  message: string;
}

/** Lists (and the per-site map) are read entry by entry, so one bad entry loses only itself. */
const LENIENT: Partial<Record<keyof Settings, (value: unknown) => unknown>> = {
  excludedTypes: (value) => cleanList(value, validOrUndefined(MIME_PATTERN), LIMITS.listEntries.max),
  excludedSites: (value) => cleanList(value, validOrUndefined(SITE), LIMITS.listEntries.max),
  aria2Sites: (value) => cleanList(value, validOrUndefined(SITE), LIMITS.listEntries.max),
  mirrorRules: (value) => cleanList(value, normalizeMirrorRule, LIMITS.mirrorRules.max),
  connectionsPerSite: cleanSiteConnections,
};

/**
 * Reads stored or imported settings, never throwing: every missing or invalid field falls back
 * to its default on its own, so one bad value does not lose the others. Invalid list entries
 * (a bad mirror rule, a malformed MIME type) are dropped one by one.
 */
export function parseSettings(input: unknown): Settings {
  const raw = isObject(input) ? input : {};
  const fields: Record<string, unknown> = {};
  for (const [key, schema] of Object.entries(FIELDS.entries)) {
    const lenient = LENIENT[key as keyof Settings];
    if (lenient) fields[key] = lenient(raw[key]);
    else {
      const result = v.safeParse(schema, raw[key]);
      fields[key] = result.success ? result.output : v.getDefault(schema);
    }
  }
  const settings = fields as Settings;
  if (settings.minBlockBytes > settings.maxBlockBytes) {
    const d = DEFAULT_SETTINGS;
    settings.minBlockBytes = Math.min(d.minBlockBytes, settings.maxBlockBytes);
    settings.maxBlockBytes = Math.max(d.maxBlockBytes, settings.minBlockBytes);
  }
  return settings;
}

/** The settings after saving or importing `input` (already checked): fields it leaves out keep their current values. */
export function mergeSettings(current: Settings, input: object): Settings {
  return parseSettings({ ...current, ...input });
}

/**
 * Checks settings strictly, as the user gave them; an empty array means valid. Unlike
 * `parseSettings`, nothing is dropped silently: each problem is reported with its field,
 * in the order of the fields.
 */
export function validateSettings(input: unknown): SettingsError[] {
  if (!isObject(input)) return [{ field: '', message: t('errorNotObject') }];
  const errors = issuesOf(FIELDS, input, '');
  // Only when both are given: a save leaves missing fields at their current values, not the defaults.
  const { minBlockBytes: min, maxBlockBytes: max } = input;
  const blockErrors = errors.some((e) => e.field === 'minBlockBytes' || e.field === 'maxBlockBytes');
  if (!blockErrors && typeof min === 'number' && typeof max === 'number' && min > max) {
    errors.push({ field: 'minBlockBytes', message: t('errorBlockOrder') });
  }
  const endpoint = aria2EndpointError(input);
  if (endpoint && !errors.some((e) => e.field === 'aria2Url')) errors.push(endpoint);
  const order = Object.keys(FIELDS.entries);
  const rank = (error: SettingsError) => order.indexOf(error.field.split('.')[0]!);
  return errors.sort((a, b) => rank(a) - rank(b));
}

const ENDPOINT_PROBLEM: Record<'not-url' | 'scheme' | 'plain-remote', MessageKey> = {
  'not-url': 'errorAria2NotUrl',
  scheme: 'errorAria2Scheme',
  'plain-remote': 'errorAria2Plain',
};

/** The aria2 address given, judged with the confirmation given beside it (both as the user gave them). */
function aria2EndpointError(input: Record<string, unknown>): SettingsError | undefined {
  const { aria2Url: url, aria2PlainConfirmed: confirmed } = input;
  if (typeof url !== 'string' || url.trim() === '') return undefined;
  const verdict = judgeEndpoint(url, confirmed === true);
  return verdict.ok ? undefined : { field: 'aria2Url', message: t(ENDPOINT_PROBLEM[verdict.problem], url.trim()) };
}

/** Strict check of one mirror rule, for the options page's per-rule messages. */
export function validateMirrorRule(rule: unknown, field = 'mirrorRule'): SettingsError[] {
  return issuesOf(MIRROR_RULE, rule, field);
}

function issuesOf(schema: v.GenericSchema, input: unknown, prefix: string): SettingsError[] {
  const result = v.safeParse(schema, input);
  if (result.success) return [];
  return result.issues.map((issue) => ({
    field: [prefix, v.getDotPath(issue)].filter(Boolean).join('.'),
    message: issue.message,
  }));
}

/** The rule in canonical form, or undefined when it cannot be used. */
export function normalizeMirrorRule(rule: unknown): MirrorRule | undefined {
  if (!isObject(rule) || typeof rule.pattern !== 'string' || !Array.isArray(rule.mirrors)) return undefined;
  const pattern = parsePattern(rule.pattern);
  const mirrors = rule.mirrors.flatMap((m) => (typeof m === 'string' ? (normalizeMirrorPrefix(m) ?? []) : []));
  if (!pattern || mirrors.length === 0) return undefined;
  return {
    pattern: `${pattern.host}${pattern.pathPrefix}`,
    mirrors: [...new Set(mirrors)].slice(0, LIMITS.mirrorsPerRule.max),
    // Both off unless the user turned them on: a query or cookies reach the mirrors only by choice.
    passQuery: rule.passQuery === true,
    sendCookies: rule.sendCookies === true,
  };
}

/**
 * Splits `host[:port]/path/prefix` (a leading scheme is tolerated and ignored) into a lower-case
 * host and a path prefix starting with '/'; undefined when it is not one.
 */
export function parsePattern(pattern: string): { host: string; pathPrefix: string } | undefined {
  const text = pattern.trim().replace(/^[a-z][a-z0-9+.-]*:\/\//i, '');
  if (text === '' || /\s/.test(text)) return undefined;
  const slash = text.indexOf('/');
  const hostPart = slash < 0 ? text : text.slice(0, slash);
  const pathPrefix = slash < 0 ? '/' : text.slice(slash);
  try {
    const url = new URL(`http://${hostPart}/`);
    if (url.username || url.password || url.pathname !== '/') return undefined;
    return { host: url.host, pathPrefix };
  } catch {
    return undefined;
  }
}

/** An http(s) URL prefix without query or fragment; undefined otherwise. */
export function normalizeMirrorPrefix(prefix: string): string | undefined {
  const url = parseHttpUrl(prefix.trim());
  if (!url || url.search || url.hash || url.username || url.password) return undefined;
  return url.href;
}

/** `type/subtype` or `type/*`, lower case; undefined when malformed. */
export function normalizeMimePattern(value: string): string | undefined {
  const text = value.trim().toLowerCase();
  return /^[a-z0-9][a-z0-9!#$&^_.+-]*\/(\*|[a-z0-9][a-z0-9!#$&^_.+-]*)$/.test(text) ? text : undefined;
}

/** Host names as browsers take them (after the URL parser's IDNA: `bücher.de` is `xn--bcher-kva.de`), or an IP address. */
const HOST_NAME = /^[a-z0-9_-]+(\.[a-z0-9_-]+)*$|^\[[0-9a-f:.]+\]$/;

/**
 * A bare host name (a pasted URL is reduced to its host); undefined when it is not one. Checked
 * after parsing too: Chromium's URL parser percent-encodes what a host cannot hold (`not a host!`
 * became `not%20a%20host!`, `*.foo.com` became `%2A.foo.com`), a rule that never matches.
 */
export function normalizeSite(value: string): string | undefined {
  const text = value.trim().toLowerCase();
  if (text === '' || /\s/.test(text)) return undefined;
  try {
    const url = new URL(/^[a-z][a-z0-9+.-]*:\/\//.test(text) ? text : `http://${text}`);
    return HOST_NAME.test(url.hostname) && !url.username ? url.hostname : undefined;
  } catch {
    return undefined;
  }
}

/** Why `entry` is not a site: a `*.` wildcard is not needed (a host covers its subdomains), anything else is not a host name. */
function siteProblem(entry: string): string {
  const wildcard = /^\*\.(.+)$/.exec(entry.trim());
  const host = wildcard && normalizeSite(wildcard[1]!);
  return host ? t('errorWildcardSite', entry.trim(), host) : t('errorNotSite', entry);
}

function validOrUndefined<T extends v.GenericSchema>(schema: T): (entry: unknown) => v.InferOutput<T> | undefined {
  return (entry) => {
    const result = v.safeParse(schema, entry);
    return result.success ? result.output : undefined;
  };
}

function cleanList(value: unknown, read: (entry: unknown) => unknown, max: number): unknown[] {
  if (!Array.isArray(value)) return [];
  return [...new Set(value.map(read).filter((entry) => entry !== undefined))].slice(0, max);
}

/** The valid entries of a per-site map (host names in canonical form, the first `max` hosts). */
function cleanSiteConnections(value: unknown): Record<string, number> {
  if (!isObject(value)) return {};
  return Object.fromEntries([...readSiteConnections(Object.entries(value)).sites].slice(0, LIMITS.connectionsPerSite.max));
}

/**
 * Per-site entries (host, most connections) read into canonical form, with each problem in words
 * (the first of a host given twice wins). Shared by the schema and the options page's text field.
 */
export function readSiteConnections(entries: Iterable<readonly [string, unknown]>): { sites: Map<string, number>; problems: string[] } {
  const {
    connectionsPerServer: bounds,
    connectionsPerSite: { max },
  } = LIMITS;
  const sites = new Map<string, number>();
  const problems: string[] = [];
  for (const [key, count] of entries) {
    const host = normalizeSite(key);
    if (host === undefined) problems.push(siteProblem(key));
    else if (!isWholeNumberWithin(count, bounds))
      problems.push(t('errorSiteCount', host, formatCount(bounds.min), formatCount(bounds.max)));
    else if (sites.has(host)) problems.push(t('errorSiteTwice', host));
    else sites.set(host, count);
  }
  if (sites.size > max) problems.push(t('errorTooMany', formatCount(max)));
  return { sites, problems };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
