import { describe, expect, it } from 'vitest';
import { DEFAULT_CONNECTION_COUNT } from '../../../../src/engine/scheduler/connections/connection-count';
import { sharesDownload, stepGain, stepPays } from '../../../../src/engine/scheduler/connections/step-verdict';

const MB = 1_000_000;
const options = DEFAULT_CONNECTION_COUNT;

describe('stepPays: whether added connections paid', () => {
  const base = { count: 2, rate: 4 * MB, downloadRate: 16 * MB };

  it('takes a step that raised the server and the download alike', () => {
    const step = { count: 4, rate: 8 * MB, downloadRate: 20 * MB };
    expect(stepPays(base, step, options)).toBe(true);
    expect(stepGain(base, step, options)).toEqual({ kind: 'enough', server: 1 });
  });

  it('refuses a step within the noise, or whose connections each brought too little', () => {
    expect(stepPays(base, { count: 4, rate: 4.3 * MB, downloadRate: 16.3 * MB }, options)).toBe(false);
    expect(stepGain(base, { count: 4, rate: 4.3 * MB, downloadRate: 16.3 * MB }, options)).toEqual({
      kind: 'small',
      server: expect.closeTo(0.075, 6) as number,
    });
    // +25 %, but over six more connections: each brought a sixth of an average one.
    expect(stepPays(base, { count: 8, rate: 5 * MB, downloadRate: 17 * MB }, options)).toBe(false);
  });

  it("refuses a step whose gain the download's other servers lost", () => {
    const step = { count: 4, rate: 6.4 * MB, downloadRate: 16.2 * MB };
    expect(stepPays(base, step, options)).toBe(false);
    expect(stepGain(base, step, options)).toEqual({
      kind: 'shared',
      server: expect.closeTo(0.6, 6) as number,
      download: expect.closeTo(0.0125, 6) as number,
    });
    // Half of the gain is the download's own: it pays.
    expect(stepPays(base, { ...step, downloadRate: 17.2 * MB }, options)).toBe(true);
  });

  it('asks a step judged before its connections are warm for a larger share of each', () => {
    const step = { count: 4, rate: 7 * MB, downloadRate: 19 * MB };
    expect(stepPays(base, step, options)).toBe(true);
    expect(stepPays(base, step, options, options.linearShare)).toBe(false);
  });

  it('tells a step beside other servers that carry a part of the download from one of a server alone', () => {
    expect(sharesDownload(base, { count: 4, rate: 6 * MB, downloadRate: 18 * MB }, options)).toBe(true);
    // The others carried 5 % of the download: within the noise of this server's own rate.
    expect(
      sharesDownload({ count: 2, rate: 4 * MB, downloadRate: 4.2 * MB }, { count: 4, rate: 8 * MB, downloadRate: 8.4 * MB }, options),
    ).toBe(false);
    expect(
      sharesDownload({ count: 2, rate: 4 * MB, downloadRate: 4 * MB }, { count: 4, rate: 8 * MB, downloadRate: 8 * MB }, options),
    ).toBe(false);
  });
});
