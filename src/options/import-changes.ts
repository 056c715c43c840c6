/**
 * Every change an import makes, as the options page lists it before asking: in the form's own
 * terms (its labels, units and lines), the secret token only as set or cleared, never shown.
 */
import { formatCount, t, type MessageKey } from '../words/i18n';
import type { MirrorRule, Settings } from '../settings/schema';
import { settingsToForm, type FormValues } from './settings-form';

/** One way an import changes a mirror rule (new rules and mirrors, cookies or the URL's query passed on, or their end). */
export interface RuleChange {
  kind: 'new-rule' | 'new-mirrors' | 'send-cookies' | 'pass-query' | 'removed-rule' | 'removed-mirrors' | 'stops-cookies' | 'stops-query';
  pattern: string;
  /** The mirror prefixes it concerns. */
  mirrors: string[];
}

export type ImportChange =
  | RuleChange
  | { kind: 'value'; field: ShownField; from: string; to: string }
  | { kind: 'list'; field: ShownField; added: string[]; removed: string[] }
  /** aria2's token: set to the file's, or cleared (a new address does not get the old one). */
  | { kind: 'secret'; to: 'file' | 'cleared' };

type ShownField = Exclude<keyof FormValues, 'rules' | 'aria2Secret' | 'aria2PlainConfirmed'>;

/** The form's fields in its order: label, and unit or kind of value. */
const FIELDS: [ShownField, MessageKey, ('list' | 'MB' | 'KB' | 'KB/s' | 's')?][] = [
  ['takeover', 'labelTakeover'],
  ['alwaysTakeOver', 'labelAlwaysTakeOver'],
  ['thresholdMb', 'fieldThreshold', 'MB'],
  ['excludedTypes', 'fieldExcludedTypes', 'list'],
  ['excludedSites', 'fieldExcludedSites', 'list'],
  ['concurrent', 'fieldConcurrent'],
  ['connections', 'fieldConnections'],
  ['siteConnections', 'fieldSiteConnections', 'list'],
  ['stall', 'fieldStall', 's'],
  ['minBlockKb', 'fieldMinBlock', 'KB'],
  ['maxBlockKb', 'fieldMaxBlock', 'KB'],
  ['speedLimitKbps', 'fieldSpeedLimit', 'KB/s'],
  ['notifyFailed', 'labelNotifyFailed'],
  ['notifyCompleted', 'labelNotifyCompleted'],
  ['saveWhileDownloading', 'labelSaveWhileDownloading'],
  ['aria2Url', 'fieldAria2Url'],
  ['aria2MinMb', 'fieldAria2MinSize', 'MB'],
  ['aria2Sites', 'fieldAria2Sites', 'list'],
];
/** Entries named in one line; the rest are counted. */
const NAMED = 10;

/** What storing `next` over `current` changes, in the form's order (mirror rules after the speed limit). */
export function importChanges(current: Settings, next: Settings): ImportChange[] {
  const [before, after] = [settingsToForm(current), settingsToForm(next)];
  const changes: ImportChange[] = [];
  for (const [field, , shape] of FIELDS) {
    const [from, to] = [String(before[field]), String(after[field])];
    if (from !== to && shape === 'list') {
      const [old, now] = [from.split('\n').filter(Boolean), to.split('\n').filter(Boolean)];
      changes.push({ kind: 'list', field, added: now.filter((e) => !old.includes(e)), removed: old.filter((e) => !now.includes(e)) });
    } else if (from !== to) changes.push({ kind: 'value', field, from: shown(from, shape), to: shown(to, shape) });
    if (field === 'speedLimitKbps') changes.push(...ruleChanges(current.mirrorRules, next.mirrorRules));
  }
  if (next.aria2Secret !== current.aria2Secret) changes.push({ kind: 'secret', to: next.aria2Secret === '' ? 'cleared' : 'file' });
  return changes;
}

/**
 * What the mirror rules `next` change of the current `rules`: new rules (by pattern) and mirrors,
 * which get requests for the files the rule matches; cookies or the URL's query (often a signed
 * token) passed to mirrors that did not get them; and rules, mirrors and either box gone.
 */
export function ruleChanges(rules: readonly MirrorRule[], next: readonly MirrorRule[]): RuleChange[] {
  const gained = next.flatMap((rule) => {
    const before = rules.find((r) => r.pattern === rule.pattern);
    const added = before ? rule.mirrors.filter((mirror) => !before.mirrors.includes(mirror)) : rule.mirrors;
    // Turned on: every mirror gets it; on before: the new mirrors do.
    const gaining = (on: boolean, wasOn = false) => (on ? (wasOn ? added : rule.mirrors) : []);
    const lost = (on: boolean, wasOn = false) => (wasOn && !on ? rule.mirrors : []);
    const changes: RuleChange[] = [
      { pattern: rule.pattern, kind: before ? 'new-mirrors' : 'new-rule', mirrors: added },
      { pattern: rule.pattern, kind: 'send-cookies', mirrors: gaining(rule.sendCookies, before?.sendCookies) },
      { pattern: rule.pattern, kind: 'pass-query', mirrors: gaining(rule.passQuery, before?.passQuery) },
      { pattern: rule.pattern, kind: 'removed-mirrors', mirrors: before?.mirrors.filter((m) => !rule.mirrors.includes(m)) ?? [] },
      { pattern: rule.pattern, kind: 'stops-cookies', mirrors: lost(rule.sendCookies, before?.sendCookies) },
      { pattern: rule.pattern, kind: 'stops-query', mirrors: lost(rule.passQuery, before?.passQuery) },
    ];
    return changes.filter((change) => change.mirrors.length > 0);
  });
  const removed = rules
    .filter((rule) => !next.some((r) => r.pattern === rule.pattern))
    .map((rule): RuleChange => ({ pattern: rule.pattern, kind: 'removed-rule', mirrors: rule.mirrors }));
  return [...gained, ...removed];
}

/** Whether a change lets Stitch send more, or to other places: the question then says so. */
export function sendsMore(change: ImportChange): boolean {
  switch (change.kind) {
    case 'new-rule':
    case 'new-mirrors':
    case 'send-cookies':
    case 'pass-query':
    case 'secret':
      return true;
    case 'value':
      return change.field === 'aria2Url' || change.field === 'aria2MinMb';
    case 'list':
      return change.field === 'aria2Sites' && change.added.length > 0;
    default:
      return false;
  }
}

const RULE_LINES: Record<RuleChange['kind'], MessageKey> = {
  'new-rule': 'importNewRule',
  'new-mirrors': 'importNewMirrors',
  'send-cookies': 'importSendsCookies',
  'pass-query': 'importPassesQuery',
  'removed-rule': 'importRemovedRule',
  'removed-mirrors': 'importRemovedMirrors',
  'stops-cookies': 'importStopsCookies',
  'stops-query': 'importStopsQuery',
};

/** One line of the question. */
export function changeLine(change: ImportChange): string {
  switch (change.kind) {
    case 'value':
      return t('importChangeValue', t(labelOf(change.field)), change.from, change.to);
    case 'list':
      return [
        change.added.length > 0 ? t('importChangeAdds', t(labelOf(change.field)), named(change.added)) : '',
        change.removed.length > 0 ? t('importChangeRemoves', t(labelOf(change.field)), named(change.removed)) : '',
      ]
        .filter(Boolean)
        .join(' ');
    case 'secret':
      return t(change.to === 'file' ? 'importSecretSet' : 'importSecretCleared');
    default:
      return t(RULE_LINES[change.kind], change.pattern, named(change.mirrors));
  }
}

function labelOf(field: ShownField): MessageKey {
  return FIELDS.find(([f]) => f === field)![1];
}

/** A form value as the question shows it: on or off, a number with its unit, or none. */
function shown(value: string, unit: string | undefined): string {
  if (value === 'true' || value === 'false') return t(value === 'true' ? 'importValueOn' : 'importValueOff');
  if (value === '') return t('importValueNone');
  return unit ? `${value} ${unit}` : value;
}

function named(entries: readonly string[]): string {
  const more = entries.length - NAMED;
  return entries.slice(0, NAMED).join(', ') + (more > 0 ? ` ${t('importMore', formatCount(more))}` : '');
}
