/**
 * Whether a step of a server's connection count paid for the connections it added. Pure.
 *
 * The added connections pay when together they raised the server's rate by `minGain` of it (clear of the
 * noise), each brought at least `minShare` of what an average connection carried before, and the whole
 * download gained at least `minNetShare` of what the server gained: where fast servers share the user's
 * line (or a busy client), one server's gain is the others' loss, and every server would otherwise grow to the cap.
 */

export interface StepVerdictOptions {
  /** The added connections must raise the server's rate by this share of it… */
  minGain: number;
  /** …each bring at least this share of the average connection's rate… */
  minShare: number;
  /** …and the whole download gain at least this share of what the server gained. */
  minNetShare: number;
}

/** A count and the rates it brought: the server's, and the whole download's (all its servers). */
export interface Measured {
  count: number;
  rate: number;
  downloadRate: number;
}

/**
 * How much a step raised the rate, as shares of the rate before: too little to count (`small`), enough for the server
 * but not for the whole download (`shared`: the servers share one line), or enough.
 */
export type StepGain =
  { kind: 'small'; server: number } | { kind: 'shared'; server: number; download: number } | { kind: 'enough'; server: number };

export function stepPays(base: Measured, step: Measured, options: StepVerdictOptions, minShare = options.minShare): boolean {
  const added = step.count - base.count;
  const gain = step.rate - base.rate;
  const share = gain / added / (base.rate / base.count);
  const netGain = step.downloadRate - base.downloadRate;
  return gain >= options.minGain * base.rate && share >= minShare && netGain >= options.minNetShare * gain;
}

/** Whether other servers carried a part of the download worth judging (more than `minGain` of it) around a step. */
export function sharesDownload(base: Measured, step: Measured, options: StepVerdictOptions): boolean {
  const others = (measured: Measured) => measured.downloadRate - measured.rate;
  return Math.max(others(base), others(step)) > options.minGain * Math.max(base.downloadRate, step.downloadRate);
}

/** How much a step raised the rate, for its reason (connection-count.ts). */
export function stepGain(base: Measured, step: Measured, options: StepVerdictOptions): StepGain {
  const gain = step.rate - base.rate;
  if (gain < options.minGain * base.rate) return { kind: 'small', server: Math.max(0, gain) / base.rate };
  const net = step.downloadRate - base.downloadRate;
  if (net < options.minNetShare * gain) return { kind: 'shared', server: gain / base.rate, download: Math.max(0, net) / base.downloadRate };
  return { kind: 'enough', server: gain / base.rate };
}
