import { describe, expect, it } from 'vitest';
import { assignWork } from '../../../../src/engine/scheduler/policies/assignment';
import type { Decision } from '../../../../src/engine/scheduler/policies/decisions';
import { Plan } from '../../../../src/engine/scheduler/loop/plan';
import type { Playback } from '../../../../src/engine/scheduler/policies/views';
import { KiB, MiB, mirror, request, type TestMirror, type TestRequest } from '../views';

/** Runs the policy the way the scheduler does: each decision carried out before the next. */
function run(mirrors: TestMirror[], size: number, options: { window?: number; playback?: Playback; requests?: TestRequest[] } = {}) {
  const requests: TestRequest[] = [...(options.requests ?? [])];
  const decisions: Decision<TestMirror, TestRequest>[] = [];
  const work = assignWork<TestMirror, TestRequest>({
    now: 0,
    plan: new Plan(size, []),
    mirrors,
    requests: () => requests,
    claims: () => requests.map((r) => ({ start: r.start, end: r.group.end })),
    windowRoom: () => (options.window ?? 100) - requests.length,
    connections: () => 2,
    maxMirrors: 8,
    fileKey: 'f',
    referencePending: false,
    playback: options.playback,
    sizes: { blockSeconds: 1, minBlockBytes: 128 * KiB, maxBlockBytes: 16 * MiB },
  });
  for (const d of work) {
    decisions.push(d);
    if (d.kind === 'issue') requests.push(request(d.mirror, d.start, d.end));
    if (d.kind === 'duplicate') {
      const copy = request(d.mirror, d.of.pos, d.of.group.end);
      d.of.group.fetches.add(copy);
      requests.push(copy);
    }
    if (d.kind === 'issue' || d.kind === 'duplicate') d.mirror.inFlight++;
  }
  return decisions;
}

describe('assignment (dynamic parallel access)', () => {
  it('keeps every mirror busy with consecutive blocks sized for it, up to its connections', () => {
    const a = mirror('a', { rate: 8 * MiB });
    const b = mirror('b', { rate: 2 * MiB });
    const decisions = run([a, b], 1024 * MiB);
    expect(decisions.map((d) => d.kind)).toEqual(['issue', 'issue', 'issue', 'issue']);
    expect(decisions.filter((d) => d.kind === 'issue' && d.mirror === a)).toHaveLength(2);
    const blocks = decisions.flatMap((d) => (d.kind === 'issue' ? [{ mirror: d.mirror, bytes: d.end - d.start, start: d.start }] : []));
    // Contiguous from the start, each block about a second at its mirror's share.
    expect(blocks.map((b) => b.start)).toEqual([
      0,
      blocks[0]!.bytes,
      blocks[0]!.bytes + blocks[1]!.bytes,
      blocks[0]!.bytes + blocks[1]!.bytes + blocks[2]!.bytes,
    ]);
    expect(blocks.find((x) => x.mirror === a)!.bytes).toBe(4 * MiB);
    expect(blocks.find((x) => x.mirror === b)!.bytes).toBe(1 * MiB);
  });

  it('stops at the block window', () => {
    expect(run([mirror('a', { rate: 8 * MiB }), mirror('b', { rate: 8 * MiB })], 1024 * MiB, { window: 3 })).toHaveLength(3);
  });

  it('in the end game an idle fast mirror duplicates the slow block instead', () => {
    const slow = mirror('slow', { rate: 512 * KiB, inFlight: 1 });
    const fast = mirror('fast', { rate: 16 * MiB });
    const last = request(slow, 0, 4 * MiB, { pos: 1 * MiB });
    const decisions = run([slow, fast], 4 * MiB, { requests: [last] });
    expect(decisions).toContainEqual({ kind: 'duplicate', mirror: fast, of: last });
    expect(decisions.filter((d) => d.kind === 'duplicate')).toHaveLength(1);
  });

  it('with a player attached, starts past its window', () => {
    const a = mirror('a', { rate: 8 * MiB });
    const decisions = run([a], 1024 * MiB, { playback: { position: 100 * MiB, aheadBytes: 4 * MiB } });
    expect(decisions[0]).toMatchObject({ kind: 'issue', start: 104 * MiB });
  });
});
