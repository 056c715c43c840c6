import { describe, expect, it } from 'vitest';
import { Plan } from '../../../src/engine/scheduler/plan';
import { streamingDecisions } from '../../../src/engine/scheduler/streaming-priority';
import { KiB, MiB, mirror, request, type TestMirror, type TestRequest } from './views';

function context(mirrors: TestMirror[], requests: TestRequest[], position: number, stored: Array<{ start: number; end: number }> = []) {
  return {
    now: 0,
    plan: new Plan(64 * MiB, stored),
    playback: { position, aheadBytes: 2 * MiB },
    mirrors,
    requests,
    claims: requests.filter((r) => r.kind === 'block').map((r) => ({ start: r.start, end: r.group.end })),
    connections: () => 2,
    windowRoom: 10,
    referencePending: false,
  };
}

describe('streaming priority', () => {
  it('requests the bytes ahead of the player nearest first, in small blocks, on the fastest mirrors first', () => {
    const slow = mirror('slow', { rate: 1 * MiB });
    const fast = mirror('fast', { rate: 4 * MiB });
    const { decisions, holdOthers } = streamingDecisions(context([slow, fast], [], 10 * MiB));
    const issued = decisions.filter((d) => d.kind === 'issue');
    expect(issued[0]).toMatchObject({ mirror: fast, start: 10 * MiB, urgent: true });
    // A quarter second at the mirror's rate, between 64 and 512 KiB.
    expect(issued[0]!.kind === 'issue' && issued[0]!.end - issued[0]!.start).toBe(1 * MiB / 2);
    expect(issued.every((d, i) => i === 0 || (d.kind === 'issue' && issued[i - 1]!.kind === 'issue' && d.start >= (issued[i - 1] as { end: number }).end))).toBe(true);
    // At most two of the player's requests per mirror.
    expect(issued.filter((d) => d.mirror === fast)).toHaveLength(2);
    expect(issued.filter((d) => d.mirror === slow)).toHaveLength(2);
    // Four requests cannot cover 2 MiB here: the rest waits, and nothing else starts.
    expect(holdOthers).toBe(true);
  });

  it('cuts far blocks while the window is not all requested, keeping what they received', () => {
    const m = mirror('m', { rate: 1 * MiB, inFlight: 1 });
    const far = request(m, 40 * MiB, 48 * MiB, { pos: 41 * MiB });
    const { decisions } = streamingDecisions(context([m], [far], 0));
    expect(decisions).toContainEqual({ kind: 'cut', request: far });
  });

  it('never cuts the primary request while its first bytes are the reference', () => {
    const primary = mirror('p', { rate: 64 * KiB, inFlight: 1, primary: true });
    const first = request(primary, 0, 1 * MiB, { pos: 1 });
    const { decisions } = streamingDecisions({ ...context([primary], [first], 30 * MiB), referencePending: true });
    expect(decisions).not.toContainEqual({ kind: 'cut', request: first });
  });

  it('lets the rest proceed once every byte of the window is stored or requested', () => {
    const m = mirror('m', { rate: 8 * MiB });
    const { holdOthers } = streamingDecisions(context([m], [], 10 * MiB, [{ start: 10 * MiB, end: 12 * MiB }]));
    expect(holdOthers).toBe(false);
  });

  it('streams the two nearest requests in the window per mirror and cuts the others there', () => {
    const m = mirror('m', { rate: 1 * MiB, inFlight: 3 });
    const a = request(m, 0, 256 * KiB);
    const b = request(m, 256 * KiB, 512 * KiB);
    const c = request(m, 512 * KiB, 768 * KiB);
    const { decisions } = streamingDecisions(context([m], [c, a, b], 0));
    expect(decisions).toContainEqual({ kind: 'stream', request: a });
    expect(decisions).toContainEqual({ kind: 'stream', request: b });
    expect(decisions).toContainEqual({ kind: 'cut', request: c });
  });
});
