/** Turns bench runs into per-scenario summaries, the terminal table and the SVG chart. */
import type { StitchStats } from './clients';
import type { Scenario } from './scenarios';

/**
 * exact: right SHA-256 (and, of a stream, it plays for the stream's length); playable: a remuxed
 * stream (ffmpeg's) that plays for the stream's length, not compared byte for byte; wrong: exit 0
 * but other bytes, no file, or a stream that does not play; failed: non-zero exit.
 */
export type Outcome = 'exact' | 'playable' | 'wrong' | 'failed' | 'timeout';

/** The runs that count in the times and efficiencies: the file the client was asked for. */
const finished = (run: Run) => run.outcome === 'exact' || run.outcome === 'playable';

export interface Run {
  scenario: string;
  client: string;
  rep: number;
  size: number;
  outcome: Outcome;
  seconds: number;
  code: number | null;
  signal: string | null;
  peakRssBytes: number | undefined;
  /** Σ body bytes the mirrors sent ÷ size. */
  overFetch: number;
  requests: number;
  connections: number;
  /** peakConnections: the most connections the client had open to that mirror at once; refused: its 503/429 answers. */
  mirrors: { bytes: number; requests: number; peakConnections: number; refused: number }[];
  stitchStats?: StitchStats;
  /** Output tail of a run that did not produce the exact file. */
  message?: string;
}

export interface Spread {
  median: number;
  min: number;
  max: number;
}

export interface Summary {
  scenario: string;
  client: string;
  runs: number;
  outcomes: Record<Outcome, number>;
  optimumSeconds: number | undefined;
  target: number | undefined;
  /** Over the exact (or playable) runs only. */
  seconds?: Spread;
  efficiency?: Spread;
  /** Over every run. */
  overFetch: Spread;
  requests: Spread;
  peakRssBytes?: Spread;
  /** This client's median time ÷ each other client's (Stitch's row only). */
  timeRatio: Record<string, number>;
  /** Per mirror, the most connections open at once in any run. */
  peakConnections: number[];
}

function spread(values: number[]): Spread | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { median, min: sorted[0]!, max: sorted.at(-1)! };
}

export function summarize(scenarios: Scenario[], clients: string[], runs: Run[], sizeOf: (s: Scenario) => number): Summary[] {
  const summaries: Summary[] = [];
  const find = (scenario: string, client: string) => summaries.find((s) => s.scenario === scenario && s.client === client);
  for (const scenario of scenarios) {
    for (const client of clients) {
      const mine = runs.filter((r) => r.scenario === scenario.id && r.client === client);
      if (mine.length === 0) continue;
      const done = mine.filter(finished);
      const seconds = spread(done.map((r) => r.seconds));
      const optimumSeconds = scenario.baseline ? find(scenario.baseline, client)?.seconds?.median : scenario.optimum?.(sizeOf(scenario));
      const outcomes: Record<Outcome, number> = { exact: 0, playable: 0, wrong: 0, failed: 0, timeout: 0 };
      for (const r of mine) outcomes[r.outcome]++;
      const rss = mine.flatMap((r) => (r.peakRssBytes === undefined ? [] : [r.peakRssBytes]));
      summaries.push({
        scenario: scenario.id,
        client,
        runs: mine.length,
        outcomes,
        optimumSeconds,
        target: scenario.target,
        seconds,
        efficiency: optimumSeconds === undefined ? undefined : spread(done.map((r) => optimumSeconds / r.seconds)),
        overFetch: spread(mine.map((r) => r.overFetch))!,
        requests: spread(mine.map((r) => r.requests))!,
        peakRssBytes: spread(rss),
        timeRatio: {},
        peakConnections: scenario.mirrors.map((_, i) => Math.max(...mine.map((r) => r.mirrors[i]?.peakConnections ?? 0))),
      });
    }
    const [first, ...others] = clients.map((c) => find(scenario.id, c));
    for (const other of others) {
      if (first?.seconds && other?.seconds) first.timeRatio[other.client] = first.seconds.median / other.seconds.median;
    }
  }
  return summaries;
}

const fixed = (n: number, digits: number) => n.toFixed(digits);
const withSpread = (s: Spread | undefined, digits: number) =>
  s === undefined ? '—' : `${fixed(s.median, digits)} (${fixed(s.min, digits)}–${fixed(s.max, digits)})`;
const mib = (bytes: number) => `${Math.round(bytes / 2 ** 20)} MiB`;

function outcomeText(s: Summary): string {
  const { exact, playable, wrong, failed, timeout } = s.outcomes;
  // A client's files are either compared byte for byte or remuxed (Client.remuxes), never both.
  const parts = [playable ? `${playable}/${s.runs} playable` : `${exact}/${s.runs} exact`];
  if (wrong) parts.push(`${wrong} WRONG FILE`);
  if (failed) parts.push(`${failed} failed`);
  if (timeout) parts.push(`${timeout} timed out`);
  return parts.join(', ');
}

function verdict(s: Summary): string {
  if (s.outcomes.wrong > 0) return '  ✗ WRONG FILE';
  if (s.target === undefined || !s.efficiency) return '';
  return s.efficiency.median >= s.target ? '  ✓' : '  ✗';
}

/** The terminal table: one block per scenario, one row per client. */
export function table(scenarios: Scenario[], summaries: Summary[], sizeOf: (s: Scenario) => number): string {
  const head = [
    'client',
    'files',
    'time s (min–max)',
    'efficiency (min–max)',
    'over-fetch',
    'requests',
    'most conns',
    'peak RSS',
    'time ÷',
  ];
  const lines: string[] = [];
  for (const scenario of scenarios) {
    const rows = summaries.filter((s) => s.scenario === scenario.id);
    if (rows.length === 0) continue;
    const optimum = rows[0]!.optimumSeconds;
    const target = scenario.target === undefined ? '' : ` · target ≥ ${scenario.target}`;
    const opt = scenario.baseline || optimum === undefined ? scenario.optimumNote : `${optimum.toFixed(2)} s = ${scenario.optimumNote}`;
    lines.push(`\n${scenario.id}. ${scenario.title} · ${mib(sizeOf(scenario))} · optimum ${opt}${target}`);
    const cells = rows.map((s) => [
      s.client,
      outcomeText(s),
      withSpread(s.seconds, 2),
      withSpread(s.efficiency, 2) + verdict(s),
      fixed(s.overFetch.median, 3),
      fixed(s.requests.median, 0),
      s.peakConnections.join('/'),
      s.peakRssBytes ? mib(s.peakRssBytes.median) : '—',
      Object.entries(s.timeRatio)
        .map(([other, ratio]) => `${other} ${ratio.toFixed(2)}`)
        .join(', '),
    ]);
    const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
    const line = (c: string[]) => `   ${c.map((cell, i) => cell.padEnd(widths[i]!)).join('  ')}`.trimEnd();
    const notApplicable = Object.entries(scenario.notApplicable ?? {}).map(
      ([client, why]) => `   ${client.padEnd(widths[0]!)}  n/a: ${why}`,
    );
    lines.push(line(head), ...cells.map(line), ...notApplicable);
  }
  return lines.join('\n');
}

const COLORS = ['#2563eb', '#f59e0b', '#9ca3af', '#10b981'];
export const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** A grouped bar chart of median efficiency per scenario and client, min–max whiskers, targets dashed. */
export function chart(scenarios: Scenario[], clients: string[], summaries: Summary[], subtitle: string): string {
  // Scenarios without an optimum (uncapped) have no efficiency: the table compares their times.
  const shown = scenarios.filter((sc) =>
    summaries.some((s) => s.scenario === sc.id && (s.efficiency || s.outcomes.exact + s.outcomes.playable === 0)),
  );
  const [left, right, top, bottom] = [56, 16, 76, 56];
  const bar = 18;
  const width = Math.max(760, left + right + shown.length * (clients.length * bar + 28));
  const group = (width - left - right) / shown.length;
  const height = 340;
  const plot = height - top - bottom;
  const yMax = 1.2;
  const y = (value: number) => top + plot * (1 - Math.min(value, yMax) / yMax);
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="11">`,
    `<rect width="${width}" height="${height}" fill="#fff"/>`,
    `<text x="${left}" y="20" font-size="14" font-weight="bold">Efficiency = optimum ÷ time (median, min–max)</text>`,
    `<text x="${left}" y="36" fill="#555">${escape(subtitle)}</text>`,
  ];
  for (let tick = 0; tick <= yMax + 1e-9; tick += 0.2) {
    out.push(
      `<line x1="${left}" x2="${width - right}" y1="${y(tick)}" y2="${y(tick)}" stroke="#e5e7eb"/>`,
      `<text x="${left - 6}" y="${y(tick) + 4}" text-anchor="end" fill="#555">${tick.toFixed(1)}</text>`,
    );
  }
  clients.forEach((client, i) => {
    const x = left + i * 110;
    out.push(
      `<rect x="${x}" y="48" width="10" height="10" fill="${COLORS[i % COLORS.length]}"/>`,
      `<text x="${x + 14}" y="57">${escape(client)}</text>`,
    );
  });
  const legend = left + clients.length * 110;
  out.push(`<line x1="${legend}" x2="${legend + 20}" y1="53" y2="53" stroke="#dc2626" stroke-dasharray="4 3" stroke-width="2"/>`);
  out.push(`<text x="${legend + 24}" y="57">target</text>`);
  shown.forEach((scenario, g) => {
    const x0 = left + g * group + (group - clients.length * bar) / 2;
    clients.forEach((client, i) => {
      const s = summaries.find((r) => r.scenario === scenario.id && r.client === client);
      const x = x0 + i * bar;
      const e = s?.efficiency;
      if (!s) return;
      if (e) {
        out.push(
          `<rect x="${x + 1}" y="${y(e.median)}" width="${bar - 2}" height="${y(0) - y(e.median)}" fill="${COLORS[i % COLORS.length]}"/>`,
        );
        out.push(`<line x1="${x + bar / 2}" x2="${x + bar / 2}" y1="${y(e.max)}" y2="${y(e.min)}" stroke="#111"/>`);
        out.push(
          `<text x="${x + bar / 2}" y="${y(e.max) - 4}" text-anchor="middle" font-size="8" transform="rotate(-90 ${x + bar / 2} ${y(e.max) - 4})" dx="12" dy="3">${e.median.toFixed(2)}</text>`,
        );
      }
      const bad =
        s.outcomes.wrong > 0 ? 'WRONG' : s.outcomes.exact + s.outcomes.playable === 0 ? (s.outcomes.timeout ? 'timeout' : 'failed') : '';
      if (bad) {
        const color = bad === 'WRONG' ? '#dc2626' : '#555';
        out.push(
          `<text x="${x + bar / 2}" y="${y(0) - 6}" text-anchor="start" fill="${color}" font-weight="bold" transform="rotate(-90 ${x + bar / 2} ${y(0) - 6})" dy="4">${bad}</text>`,
        );
      }
    });
    if (scenario.target !== undefined) {
      out.push(
        `<line x1="${x0 - 6}" x2="${x0 + clients.length * bar + 6}" y1="${y(scenario.target)}" y2="${y(scenario.target)}" stroke="#dc2626" stroke-dasharray="4 3" stroke-width="2"/>`,
      );
    }
    out.push(
      `<text x="${x0 + (clients.length * bar) / 2}" y="${height - bottom + 16}" text-anchor="middle">${escape(scenario.short)}</text>`,
    );
  });
  out.push(`<line x1="${left}" x2="${width - right}" y1="${y(0)}" y2="${y(0)}" stroke="#111"/>`);
  out.push(
    `<text x="${left}" y="${height - 12}" fill="#555">optimum: size ÷ Σ caps (3: caps while up; 6: the same client without resets); 7 must never give a wrong file</text>`,
  );
  out.push('</svg>');
  return out.join('\n') + '\n';
}
