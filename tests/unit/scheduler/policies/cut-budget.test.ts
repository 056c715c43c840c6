import { describe, expect, it } from 'vitest';
import { CutBudget, MAX_CUTS_PER_MIRROR } from '../../../../src/engine/scheduler/policies/cut-budget';

/** How many of `tries` cuts at `now` the budget allows on `mirror`. */
function allowed(budget: CutBudget<string>, mirror: string, now: number, tries: number): number {
  let cuts = 0;
  for (let i = 0; i < tries; i++) if (budget.take(mirror, now)) cuts++;
  return cuts;
}

describe('the cut budget', () => {
  it('allows a burst of cuts on a mirror (a seek cutting its connections), then no more within the second', () => {
    const budget = new CutBudget<string>();
    expect(allowed(budget, 'a', 0, 6)).toBe(6);
    expect(allowed(budget, 'a', 500, 100)).toBe(MAX_CUTS_PER_MIRROR - 6);
    expect(allowed(budget, 'a', 999, 1)).toBe(0);
  });

  it('gives each cut back a second after it was made', () => {
    const budget = new CutBudget<string>();
    expect(allowed(budget, 'a', 0, 6)).toBe(6);
    expect(allowed(budget, 'a', 500, 100)).toBe(MAX_CUTS_PER_MIRROR - 6);
    // The six of t=0 are a second old; those of t=500 not yet.
    expect(allowed(budget, 'a', 1000, 100)).toBe(6);
    expect(allowed(budget, 'a', 1500, 100)).toBe(MAX_CUTS_PER_MIRROR - 6);
  });

  it('counts each mirror on its own', () => {
    const budget = new CutBudget<string>();
    expect(allowed(budget, 'a', 0, 100)).toBe(MAX_CUTS_PER_MIRROR);
    expect(allowed(budget, 'b', 0, 100)).toBe(MAX_CUTS_PER_MIRROR);
  });
});
