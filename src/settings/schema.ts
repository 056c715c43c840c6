/**
 * The one settings schema: types, defaults, a loader that never throws (`parseSettings`, used on
 * every load so bad stored settings cannot crash the worker) and a strict checker with readable
 * errors (`validateSettings`, used on save and import by the options page and the background).
 * Platform-free: no browser API here.
 */

/** Sends URLs matching `pattern` to the same path under each mirror prefix as well. */
export interface MirrorRule {
  /**
   * Host (with port if not the default) and path prefix, no scheme: `example.com/releases/`.
   * A URL matches when its host equals the host and its path starts with the path prefix.
   */
  pattern: string;
  /** Absolute http(s) URL prefixes; the part of the URL after the pattern is appended. */
  mirrors: string[];
  /** Append the URL's query too (it often holds a signed token meant for the original site only). */
  passQuery: boolean;
  /** Send the browser's cookies for the mirrors' sites with their requests. */
  sendCookies: boolean;
}

export interface Settings {
  version: 1;
  /** Take over browser downloads at all. */
  takeover: boolean;
  /** Downloads of at least this many bytes (or of unknown size) are taken over. */
  thresholdBytes: number;
  /** MIME types left to the browser: exact (`application/pdf`) or a family (`video/*`). */
  excludedTypes: string[];
  /** Hosts left to the browser; a host also covers its subdomains. */
  excludedSites: string[];
  /** Jobs running at once; the rest wait in the queue. */
  maxConcurrentJobs: number;
  /** Connections to one server at once (HTTP/1.1 browsers allow 6). */
  connectionsPerServer: number;
  /** Bounds of the block size the scheduler may choose. */
  minBlockBytes: number;
  maxBlockBytes: number;
  /** Overall download rate cap in bytes/s; null: no limit. */
  speedLimitBytesPerSec: number | null;
  mirrorRules: MirrorRule[];
  /** A system notification when a download fails (on by default: nobody watches the popup). */
  notifyFailed: boolean;
  /** A system notification when a download is saved. */
  notifyCompleted: boolean;
}

export const MB = 1_000_000;
export const MIB = 1024 * 1024;

export const DEFAULT_SETTINGS: Readonly<Settings> = Object.freeze({
  version: 1,
  takeover: true,
  thresholdBytes: 20 * MB,
  excludedTypes: [],
  excludedSites: [],
  maxConcurrentJobs: 3,
  connectionsPerServer: 4,
  minBlockBytes: 1 * MIB,
  maxBlockBytes: 16 * MIB,
  speedLimitBytesPerSec: null,
  mirrorRules: [],
  notifyFailed: true,
  notifyCompleted: false,
});

/** Limits every field must respect; the options page can show them as input bounds. */
export const LIMITS = {
  thresholdBytes: { min: 0, max: 1e15 },
  maxConcurrentJobs: { min: 1, max: 10 },
  connectionsPerServer: { min: 1, max: 6 },
  blockBytes: { min: 64 * 1024, max: 64 * MIB },
  speedLimitBytesPerSec: { min: 1024, max: 1e12 },
  mirrorRules: { max: 100 },
  mirrorsPerRule: { max: 16 },
  listEntries: { max: 500 },
} as const;

/** One problem with one field, in words the options page can show next to it. */
export interface SettingsError {
  /** Dotted path of the field: `connectionsPerServer`, `mirrorRules.0.mirrors.1`. */
  field: string;
  message: string;
}

/**
 * Reads stored or imported settings, never throwing: every missing or invalid field falls back
 * to its default on its own, so one bad value does not lose the others. Invalid list entries
 * (a bad mirror rule, a malformed MIME type) are dropped one by one.
 */
export function parseSettings(input: unknown): Settings {
  const raw = isObject(input) ? input : {};
  const d = DEFAULT_SETTINGS;
  const pick = <K extends keyof Settings>(key: K, ok: (v: unknown) => boolean): Settings[K] =>
    ok(raw[key]) ? (raw[key] as Settings[K]) : clone(d[key]);
  const settings: Settings = {
    version: 1,
    takeover: pick('takeover', (v) => typeof v === 'boolean'),
    thresholdBytes: pick('thresholdBytes', (v) => isIntIn(v, LIMITS.thresholdBytes)),
    excludedTypes: cleanList(raw.excludedTypes, normalizeMimePattern),
    excludedSites: cleanList(raw.excludedSites, normalizeSite),
    maxConcurrentJobs: pick('maxConcurrentJobs', (v) => isIntIn(v, LIMITS.maxConcurrentJobs)),
    connectionsPerServer: pick('connectionsPerServer', (v) => isIntIn(v, LIMITS.connectionsPerServer)),
    minBlockBytes: pick('minBlockBytes', (v) => isIntIn(v, LIMITS.blockBytes)),
    maxBlockBytes: pick('maxBlockBytes', (v) => isIntIn(v, LIMITS.blockBytes)),
    speedLimitBytesPerSec: pick('speedLimitBytesPerSec', (v) => v === null || isIntIn(v, LIMITS.speedLimitBytesPerSec)),
    mirrorRules: Array.isArray(raw.mirrorRules)
      ? raw.mirrorRules.flatMap((r) => normalizeMirrorRule(r) ?? []).slice(0, LIMITS.mirrorRules.max)
      : [],
    notifyFailed: pick('notifyFailed', (v) => typeof v === 'boolean'),
    notifyCompleted: pick('notifyCompleted', (v) => typeof v === 'boolean'),
  };
  if (settings.minBlockBytes > settings.maxBlockBytes) {
    settings.minBlockBytes = Math.min(d.minBlockBytes, settings.maxBlockBytes);
    settings.maxBlockBytes = Math.max(d.maxBlockBytes, settings.minBlockBytes);
  }
  return settings;
}

/**
 * Checks settings strictly, as the user gave them; an empty array means valid. Unlike
 * `parseSettings`, nothing is dropped silently: each problem is reported with its field.
 */
export function validateSettings(input: unknown): SettingsError[] {
  if (!isObject(input)) return [{ field: '', message: 'settings must be a JSON object' }];
  const errors: SettingsError[] = [];
  const fail = (field: string, message: string) => errors.push({ field, message });
  const has = (key: string) => input[key] !== undefined;

  if (has('version') && input.version !== 1) fail('version', `unknown settings version ${String(input.version)}; expected 1`);
  if (has('takeover') && typeof input.takeover !== 'boolean') fail('takeover', 'take-over must be on or off (true or false)');
  for (const field of ['notifyFailed', 'notifyCompleted']) {
    if (has(field) && typeof input[field] !== 'boolean') fail(field, 'notifications must be on or off (true or false)');
  }
  const ints: [keyof typeof LIMITS, string, string][] = [
    ['thresholdBytes', 'thresholdBytes', 'the size threshold'],
    ['maxConcurrentJobs', 'maxConcurrentJobs', 'concurrent downloads'],
    ['connectionsPerServer', 'connectionsPerServer', 'connections per server'],
    ['blockBytes', 'minBlockBytes', 'the smallest block size'],
    ['blockBytes', 'maxBlockBytes', 'the largest block size'],
  ];
  for (const [limit, field, label] of ints) {
    if (!has(field)) continue;
    const bounds = LIMITS[limit] as { min: number; max: number };
    if (!isIntIn(input[field], bounds)) fail(field, `${label} must be a whole number from ${bounds.min} to ${bounds.max}`);
  }
  if (isIntIn(input.minBlockBytes, LIMITS.blockBytes) && isIntIn(input.maxBlockBytes, LIMITS.blockBytes)) {
    if ((input.minBlockBytes as number) > (input.maxBlockBytes as number)) {
      fail('minBlockBytes', 'the smallest block size must not exceed the largest');
    }
  }
  if (has('speedLimitBytesPerSec') && input.speedLimitBytesPerSec !== null) {
    const { min, max } = LIMITS.speedLimitBytesPerSec;
    if (!isIntIn(input.speedLimitBytesPerSec, LIMITS.speedLimitBytesPerSec)) {
      fail('speedLimitBytesPerSec', `the speed limit must be empty (no limit) or a whole number of bytes/s from ${min} to ${max}`);
    }
  }
  checkList(input.excludedTypes, 'excludedTypes', normalizeMimePattern, 'is not a MIME type like video/mp4 or video/*', fail);
  checkList(input.excludedSites, 'excludedSites', normalizeSite, 'is not a host name like example.com', fail);
  if (has('mirrorRules')) {
    if (!Array.isArray(input.mirrorRules)) fail('mirrorRules', 'mirror rules must be a list');
    else {
      if (input.mirrorRules.length > LIMITS.mirrorRules.max) fail('mirrorRules', `at most ${LIMITS.mirrorRules.max} mirror rules`);
      input.mirrorRules.forEach((rule, i) => errors.push(...validateMirrorRule(rule, `mirrorRules.${i}`)));
    }
  }
  return errors;
}

/** Strict check of one mirror rule, for the options page's per-rule messages. */
export function validateMirrorRule(rule: unknown, field = 'mirrorRule'): SettingsError[] {
  if (!isObject(rule)) return [{ field, message: 'a mirror rule needs a URL pattern and a list of mirrors' }];
  const errors: SettingsError[] = [];
  if (typeof rule.pattern !== 'string' || parsePattern(rule.pattern) === undefined) {
    errors.push({
      field: `${field}.pattern`,
      message: `"${String(rule.pattern ?? '')}" is not a URL pattern: write a host and path prefix, like example.com/releases/`,
    });
  }
  if (!Array.isArray(rule.mirrors) || rule.mirrors.length === 0) {
    errors.push({ field: `${field}.mirrors`, message: 'list at least one mirror prefix, like https://mirror.example.org/pub/' });
  } else {
    if (rule.mirrors.length > LIMITS.mirrorsPerRule.max) {
      errors.push({ field: `${field}.mirrors`, message: `at most ${LIMITS.mirrorsPerRule.max} mirrors per rule` });
    }
    rule.mirrors.forEach((mirror, j) => {
      if (typeof mirror !== 'string' || normalizeMirrorPrefix(mirror) === undefined) {
        errors.push({ field: `${field}.mirrors.${j}`, message: `"${String(mirror)}" is not an http:// or https:// URL prefix` });
      }
    });
  }
  for (const flag of ['passQuery', 'sendCookies'] as const) {
    if (rule[flag] !== undefined && typeof rule[flag] !== 'boolean') errors.push({ field: `${field}.${flag}`, message: `${flag} must be true or false` });
  }
  return errors;
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
  try {
    const url = new URL(prefix.trim());
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
    if (url.search || url.hash || url.username || url.password) return undefined;
    return url.href;
  } catch {
    return undefined;
  }
}

/** `type/subtype` or `type/*`, lower case; undefined when malformed. */
export function normalizeMimePattern(value: string): string | undefined {
  const text = value.trim().toLowerCase();
  return /^[a-z0-9][a-z0-9!#$&^_.+-]*\/(\*|[a-z0-9][a-z0-9!#$&^_.+-]*)$/.test(text) ? text : undefined;
}

/** A bare host name (a pasted URL is reduced to its host); undefined when it is not one. */
export function normalizeSite(value: string): string | undefined {
  const text = value.trim().toLowerCase();
  if (text === '') return undefined;
  try {
    const url = new URL(/^[a-z][a-z0-9+.-]*:\/\//.test(text) ? text : `http://${text}`);
    return url.hostname && !url.username ? url.hostname : undefined;
  } catch {
    return undefined;
  }
}

function checkList(
  value: unknown,
  field: string,
  normalize: (v: string) => string | undefined,
  problem: string,
  fail: (field: string, message: string) => void,
): void {
  if (value === undefined) return;
  if (!Array.isArray(value)) return fail(field, 'must be a list');
  if (value.length > LIMITS.listEntries.max) fail(field, `at most ${LIMITS.listEntries.max} entries`);
  value.forEach((entry, i) => {
    if (typeof entry !== 'string' || normalize(entry) === undefined) fail(`${field}.${i}`, `"${String(entry)}" ${problem}`);
  });
}

function cleanList(value: unknown, normalize: (v: string) => string | undefined): string[] {
  if (!Array.isArray(value)) return [];
  const clean = value.flatMap((v) => (typeof v === 'string' ? (normalize(v) ?? []) : []));
  return [...new Set(clean)].slice(0, LIMITS.listEntries.max);
}

function isIntIn(value: unknown, bounds: { min: number; max: number }): boolean {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= bounds.min && value <= bounds.max;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function clone<T>(value: T): T {
  return Array.isArray(value) ? ([...value] as T) : value;
}
