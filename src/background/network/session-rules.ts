import type { BrowserApi, SessionRule } from '../browser-api';

/** A session rule as a concept wants it: the id is given when it is added. */
export type RuleSpec = Omit<SessionRule, 'id'>;

/**
 * The priorities of Stitch's session rules, in one place since they act on the same requests: a
 * rule that lets Stitch reach a local address its download is on (allow) beats the rule that
 * stops every other request of Stitch's to one (block), and the Referer of a download
 * (modifyHeaders) must be above both, or an allow rule of equal or higher priority would cancel
 * it (both browsers drop modifyHeaders rules below a matching allow rule).
 */
export const RULE_PRIORITY = { localBlock: 1, localAllow: 2, referer: 3 } as const;

/**
 * The extension's declarativeNetRequest session rules, shared by the concepts that set some
 * (referrer-rules.ts, local-network-rules.ts): each adds a source of the rules it wants now, and a
 * sync makes the browser's session rules exactly their union. Ids are given here, so rules of
 * different concepts never share one.
 *
 * Session rules outlive a worker restart but not a browser restart, and carry no owner: rules
 * left by a previous worker that nobody wants now are removed by the first sync, and a rule
 * already in place that is wanted again is kept (not removed and added: no moment without it).
 */
export class SessionRules {
  private readonly sources: (() => readonly RuleSpec[])[] = [];
  /** The sync not yet started (joined by later changes), and the last one queued. */
  private next: Promise<void> | undefined;
  private last: Promise<void> = Promise.resolve();

  constructor(private readonly api: BrowserApi) {}

  /** A concept's rules, read at every sync. */
  add(source: () => readonly RuleSpec[]): void {
    this.sources.push(source);
  }

  /**
   * Makes the session rules exactly those the sources want: adds the missing ones, removes the
   * others. Never rejects: a rule the browser refuses is logged, and the others still go in.
   */
  sync(): Promise<void> {
    const rules = this.api.sessionRules;
    if (!rules) return Promise.resolve();
    if (!this.next) {
      const next = this.last
        .then(() => {
          this.next = undefined;
          return this.apply(rules);
        })
        .catch((error: unknown) => console.warn('Stitch: could not update the session rules', error));
      this.next = next;
      this.last = next;
    }
    return this.next;
  }

  /** Waits for the updates already queued (a change that needs none must not race ahead of them). */
  settled(): Promise<void> {
    return this.next ?? this.last;
  }

  private async apply(api: NonNullable<BrowserApi['sessionRules']>): Promise<void> {
    const want = new Map<string, RuleSpec>();
    for (const source of this.sources) for (const spec of source()) want.set(ruleKey(spec), spec);
    const current = await api.get();
    const kept = new Set<string>();
    const removeRuleIds: number[] = [];
    for (const rule of current) {
      const key = ruleKey(rule);
      if (want.has(key) && !kept.has(key)) kept.add(key);
      else removeRuleIds.push(rule.id);
    }
    const taken = new Set(current.map((r) => r.id));
    let id = 0;
    const addRules: SessionRule[] = [];
    for (const [key, spec] of want) {
      if (kept.has(key)) continue;
      while (taken.has(++id));
      addRules.push({ id, ...spec });
    }
    if (removeRuleIds.length === 0 && addRules.length === 0) return;
    try {
      await api.update({ removeRuleIds, addRules });
    } catch (error) {
      // One rule the browser refuses must not keep the others out: apply them one by one.
      if (addRules.length + removeRuleIds.length <= 1) throw error;
      if (removeRuleIds.length > 0)
        await api.update({ removeRuleIds }).catch((e: unknown) => console.warn('Stitch: could not remove session rules', e));
      for (const rule of addRules) {
        await api.update({ addRules: [rule] }).catch((e: unknown) => console.warn('Stitch: the browser refused a session rule', rule, e));
      }
    }
  }
}

/**
 * What a rule does, whatever its id: its fields as JSON with the keys sorted. Fields without a
 * value are left out, since Firefox returns every field it knows, `null` when unset (Chrome
 * returns the rule as given).
 */
export function ruleKey(rule: SessionRule | RuleSpec): string {
  const { priority, condition, action } = rule;
  return JSON.stringify({ priority, condition, action }, (_key, value: unknown) =>
    value && typeof value === 'object' && !Array.isArray(value)
      ? Object.fromEntries(
          Object.entries(value)
            .filter(([, v]) => v !== null && v !== undefined)
            .sort(([a], [b]) => (a < b ? -1 : 1)),
        )
      : value,
  );
}
