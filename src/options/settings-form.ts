import { KB, MB } from '../words/format';
import { formatCount, sentence, t, type MessageKey } from '../words/i18n';
import {
  LIMITS,
  readSiteConnections,
  UNIT_BOUNDS,
  validateSettings,
  type MirrorRule,
  type Settings,
  type SettingsError,
} from '../settings/schema';

/**
 * The options form as text, in the units of the browser's download list (MB, KB, KB/s: binary
 * multiples, see words/format.ts), and its conversion to and from `Settings`, exact both
 * ways: bytes / 2^n has a finite decimal form, which is shown in full. Pure: the DOM side is in form-view.ts.
 */

export interface RuleValues {
  pattern: string;
  /** One mirror prefix per line. */
  mirrors: string;
  passQuery: boolean;
  sendCookies: boolean;
  /** Only for the "test" button; not part of the settings. */
  sampleUrl: string;
}

export interface FormValues {
  takeover: boolean;
  alwaysTakeOver: boolean;
  thresholdMb: string;
  /** One entry per line. */
  excludedTypes: string;
  excludedSites: string;
  concurrent: string;
  connections: string;
  /** One `host N` per line: the most connections to that site. */
  siteConnections: string;
  stall: string;
  minBlockKb: string;
  maxBlockKb: string;
  /** Empty: no limit. */
  speedLimitKbps: string;
  rules: RuleValues[];
  notifyFailed: boolean;
  notifyCompleted: boolean;
  saveWhileDownloading: boolean;
  aria2Url: string;
  aria2Secret: string;
  aria2PlainConfirmed: boolean;
  /** Empty: no size sends a download to aria2. */
  aria2MinMb: string;
  aria2Sites: string;
}

export function settingsToForm(settings: Settings, sampleUrls: readonly string[] = []): FormValues {
  return {
    takeover: settings.takeover,
    alwaysTakeOver: settings.alwaysTakeOver,
    thresholdMb: formatNumber(settings.thresholdBytes / MB),
    excludedTypes: settings.excludedTypes.join('\n'),
    excludedSites: settings.excludedSites.join('\n'),
    concurrent: String(settings.maxConcurrentJobs),
    connections: String(settings.connectionsPerServer),
    siteConnections: Object.entries(settings.connectionsPerSite)
      .map(([host, max]) => `${host} ${max}`)
      .join('\n'),
    stall: String(settings.stallSeconds),
    minBlockKb: formatNumber(settings.minBlockBytes / KB),
    maxBlockKb: formatNumber(settings.maxBlockBytes / KB),
    speedLimitKbps: settings.speedLimitBytesPerSec === null ? '' : formatNumber(settings.speedLimitBytesPerSec / KB),
    rules: settings.mirrorRules.map((rule, i) => ({
      pattern: rule.pattern,
      mirrors: rule.mirrors.join('\n'),
      passQuery: rule.passQuery,
      sendCookies: rule.sendCookies,
      sampleUrl: sampleUrls[i] ?? '',
    })),
    notifyFailed: settings.notifyFailed,
    notifyCompleted: settings.notifyCompleted,
    saveWhileDownloading: settings.saveWhileDownloading,
    aria2Url: settings.aria2Url,
    aria2Secret: settings.aria2Secret,
    aria2PlainConfirmed: settings.aria2PlainConfirmed,
    aria2MinMb: settings.aria2MinBytes === null ? '' : formatNumber(settings.aria2MinBytes / MB),
    aria2Sites: settings.aria2Sites.join('\n'),
  };
}

/**
 * The settings the form describes, and every problem with them (field names as in
 * `validateSettings`, so the background's errors land on the same fields). Fields in units
 * are checked here, with messages in those units; everything else by `validateSettings`.
 */
export function formToSettings(values: FormValues): { settings: Settings; errors: SettingsError[] } {
  const errors: SettingsError[] = [];
  const settings: Partial<Settings> & { version: 1 } = {
    version: 1,
    takeover: values.takeover,
    alwaysTakeOver: values.alwaysTakeOver,
    excludedTypes: lines(values.excludedTypes),
    excludedSites: lines(values.excludedSites),
    maxConcurrentJobs: wholeNumber(values.concurrent),
    connectionsPerServer: wholeNumber(values.connections),
    stallSeconds: wholeNumber(values.stall),
    mirrorRules: values.rules.map(ruleFromValues),
    notifyFailed: values.notifyFailed,
    notifyCompleted: values.notifyCompleted,
    saveWhileDownloading: values.saveWhileDownloading,
    aria2Url: values.aria2Url.trim(),
    aria2Secret: values.aria2Secret,
    aria2PlainConfirmed: values.aria2PlainConfirmed,
    aria2Sites: lines(values.aria2Sites),
  };

  const { thresholdBytes: threshold, blockBytes: block, speedLimitBytesPerSec: speed } = LIMITS;
  const inUnits = (field: keyof Settings, text: string, unit: number, bounds: { min: number; max: number }, message: string) => {
    const bytes = inBytes(text, unit);
    if (bytes === undefined || bytes < bounds.min || bytes > bounds.max) errors.push({ field, message });
    else (settings as Record<string, unknown>)[field] = bytes;
  };
  inUnits('thresholdBytes', values.thresholdMb, MB, threshold, UNIT_BOUNDS.thresholdBytes());
  inUnits('minBlockBytes', values.minBlockKb, KB, block, UNIT_BOUNDS.minBlockBytes());
  inUnits('maxBlockBytes', values.maxBlockKb, KB, block, UNIT_BOUNDS.maxBlockBytes());
  const sites = siteConnectionsFromText(values.siteConnections);
  if (sites.problems.length > 0) errors.push(...sites.problems.map((message) => ({ field: 'connectionsPerSite', message })));
  else settings.connectionsPerSite = Object.fromEntries(sites.sites);
  if (values.speedLimitKbps.trim() === '') settings.speedLimitBytesPerSec = null;
  else inUnits('speedLimitBytesPerSec', values.speedLimitKbps, KB, speed, UNIT_BOUNDS.speedLimitBytesPerSec());
  if (values.aria2MinMb.trim() === '') settings.aria2MinBytes = null;
  else inUnits('aria2MinBytes', values.aria2MinMb, MB, threshold, UNIT_BOUNDS.aria2MinBytes());

  // Fields that failed above are absent, so validateSettings does not report them twice.
  for (const error of validateSettings(settings)) {
    const blankPattern = /^mirrorRules\.(\d+)\.pattern$/.exec(error.field);
    if (blankPattern && values.rules[Number(blankPattern[1])]?.pattern.trim() === '') {
      errors.push({ field: error.field, message: t('errorBlankPattern') });
    } else errors.push(error);
  }
  return { settings: settings as Settings, errors: sortByForm(errors) };
}

export function ruleFromValues(rule: RuleValues): MirrorRule {
  return { pattern: rule.pattern.trim(), mirrors: lines(rule.mirrors), passQuery: rule.passQuery, sendCookies: rule.sendCookies };
}

/** Non-empty trimmed lines. */
export function lines(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '');
}

/** `host N` lines as per-site entries; a line that is not two words is a problem of its own. */
function siteConnectionsFromText(text: string): { sites: Map<string, number>; problems: string[] } {
  const problems: string[] = [];
  const entries = lines(text).flatMap((line): [string, number][] => {
    const words = line.split(/\s+/);
    if (words.length === 2) return [[words[0]!, wholeNumber(words[1]!)]];
    problems.push(t('errorSiteConnectionsLine', line));
    return [];
  });
  const read = readSiteConnections(entries);
  return { sites: read.sites, problems: [...problems, ...read.problems] };
}

/**
 * A number the way a number field takes it: `20`, `0.5`, `47.6837158203125`. In full: bytes in
 * binary units always have a finite decimal form, and rounding it would change the bytes on save.
 */
function formatNumber(value: number): string {
  return String(value);
}

/** A whole number, or NaN (which `validateSettings` reports) for anything else. */
function wholeNumber(text: string): number {
  const trimmed = text.trim();
  return trimmed === '' ? Number.NaN : Number(trimmed);
}

/** `text` × `unit` as whole bytes, or undefined when it is not a number. */
function inBytes(text: string, unit: number): number | undefined {
  const trimmed = text.trim();
  if (trimmed === '') return undefined;
  const value = Number(trimmed);
  return Number.isFinite(value) ? Math.round(value * unit) : undefined;
}

/** Errors in the order the fields appear on the page. */
const FIELD_ORDER = [
  '',
  'version',
  'takeover',
  'alwaysTakeOver',
  'thresholdBytes',
  'excludedTypes',
  'excludedSites',
  'maxConcurrentJobs',
  'connectionsPerServer',
  'connectionsPerSite',
  'stallSeconds',
  'minBlockBytes',
  'maxBlockBytes',
  'speedLimitBytesPerSec',
  'mirrorRules',
  'notifyFailed',
  'notifyCompleted',
  'saveWhileDownloading',
  'aria2Url',
  'aria2Secret',
  'aria2PlainConfirmed',
  'aria2MinBytes',
  'aria2Sites',
];

function sortByForm(errors: SettingsError[]): SettingsError[] {
  const rank = (field: string) => {
    const i = FIELD_ORDER.indexOf(field.split('.')[0]!);
    return i < 0 ? FIELD_ORDER.length : i;
  };
  // Stable sort: entries of one list (excludedTypes.0, .1, rules) keep their order.
  return errors
    .map((e, i) => ({ e, i }))
    .sort((a, b) => rank(a.e.field) - rank(b.e.field) || a.i - b.i)
    .map(({ e }) => e);
}

/**
 * Which form control shows an error: a scalar field's own name, `excludedTypes` for any of its
 * lines, `mirrorRules.<i>.pattern` / `.mirrors` for a rule, '' for the page as a whole.
 */
export function controlOf(field: string): string {
  const [head, index, part] = field.split('.');
  if (head === 'mirrorRules') {
    if (index === undefined) return 'mirrorRules';
    return `mirrorRules.${index}.${part === 'pattern' ? 'pattern' : 'mirrors'}`;
  }
  if (head === 'version') return '';
  return head ?? '';
}

const LABELS: Record<string, MessageKey> = {
  takeover: 'labelTakeover',
  alwaysTakeOver: 'labelAlwaysTakeOver',
  thresholdBytes: 'fieldThreshold',
  excludedTypes: 'fieldExcludedTypes',
  excludedSites: 'fieldExcludedSites',
  maxConcurrentJobs: 'fieldConcurrent',
  connectionsPerServer: 'fieldConnections',
  connectionsPerSite: 'fieldSiteConnections',
  stallSeconds: 'fieldStall',
  minBlockBytes: 'fieldMinBlock',
  maxBlockBytes: 'fieldMaxBlock',
  speedLimitBytesPerSec: 'fieldSpeedLimit',
  mirrorRules: 'labelMirrorRules',
  notifyFailed: 'labelNotifyFailed',
  notifyCompleted: 'labelNotifyCompleted',
  saveWhileDownloading: 'labelSaveWhileDownloading',
  aria2Url: 'fieldAria2Url',
  aria2Secret: 'fieldAria2Secret',
  aria2PlainConfirmed: 'fieldAria2PlainConfirmed',
  aria2MinBytes: 'fieldAria2MinSize',
  aria2Sites: 'fieldAria2Sites',
};

/** `Size threshold: Enter a number…`, `Mirror rule 2: …` for the error summary. */
export function errorLine(error: SettingsError): string {
  const control = controlOf(error.field);
  const rule = /^mirrorRules\.(\d+)/.exec(control);
  const label = rule ? t('labelMirrorRule', formatCount(Number(rule[1]) + 1)) : LABELS[control] && t(LABELS[control]);
  return label ? t('errorLine', label, sentence(error.message)) : sentence(error.message);
}
