import { describe, expect, it } from 'vitest';
import { Plan } from '../../../../src/engine/scheduler/loop/plan';
import { streamingDecisions, urgentBlockBytes } from '../../../../src/engine/scheduler/policies/streaming-priority';
import type { Playback } from '../../../../src/engine/scheduler/policies/views';
import { KiB, MiB, mirror, request, type TestMirror, type TestRequest } from '../views';

const NOW = 100_000;

function context(mirrors: TestMirror[], requests: TestRequest[], players: Playback[], stored: Array<{ start: number; end: number }> = []) {
  return {
    now: NOW,
    plan: new Plan(64 * MiB, stored),
    players,
    mirrors,
    requests,
    claims: requests.filter((r) => r.kind === 'block').map((r) => ({ start: r.start, end: r.group.end })),
    connections: () => 2,
    windowRoom: 20,
    referencePending: false,
  };
}
const at = (position: number, aheadBytes = 2 * MiB, bytesPerSecond?: number): Playback => ({ position, aheadBytes, bytesPerSecond });
const issued = (decisions: ReturnType<typeof streamingDecisions>['decisions']) => decisions.filter((d) => d.kind === 'issue');

describe('streaming priority: time to byte', () => {
  it('a seek into a slow request far from its position starts a fresh request there and cuts the old one (the 22 s seek)', () => {
    // One server at 72 kB/s; the block [1 MiB, 2 MiB) has reached 1.1 MB; the player seeks to 1.7 MB.
    const server = mirror('s', { rate: 72_000, inFlight: 1, rttMs: 20 });
    const old = request(server, 1 * MiB, 2 * MiB, { pos: 1_100_000, issuedAt: NOW - 5000, lastByteAt: NOW });
    const { decisions, reserved } = streamingDecisions(
      context([server], [old], [at(1_700_000, 512 * KiB, 36_000)], [{ start: 0, end: 1_100_000 }]),
    );
    expect(decisions).toContainEqual({ kind: 'split', request: old, at: 1_700_000 });
    expect(issued(decisions)[0]).toMatchObject({ mirror: server, start: 1_700_000, urgent: true });
    // What the old request brings before the seek target is not needed now: it gives its bandwidth.
    expect(decisions).toContainEqual({ kind: 'cut', request: old });
    expect(reserved.has(server)).toBe(true);
  });

  it('keeps the request on its way when it brings the byte about as soon as a fresh one would', () => {
    const server = mirror('s', { rate: 4 * MiB, inFlight: 1, rttMs: 50 });
    const near = request(server, 0, 4 * MiB, { pos: 1 * MiB - 64 * KiB, lastByteAt: NOW });
    const { decisions } = streamingDecisions(context([server], [near], [at(1 * MiB)], [{ start: 0, end: 1 * MiB - 64 * KiB }]));
    expect(decisions.some((d) => d.kind === 'split')).toBe(false);
    expect(decisions).toContainEqual({ kind: 'stream', request: near });
  });

  it('prefers the fresh request on the mirror with the shortest round trip', () => {
    const slow = mirror('slow', { rate: 100 * KiB, inFlight: 1, rttMs: 30 });
    const far = mirror('far', { rate: 8 * MiB, rttMs: 400 });
    const near = mirror('near', { rate: 1 * MiB, rttMs: 10 });
    const carrier = request(slow, 0, 8 * MiB, { pos: 1 * MiB, lastByteAt: NOW });
    const { decisions } = streamingDecisions(context([slow, far, near], [carrier], [at(3 * MiB)], [{ start: 0, end: 1 * MiB }]));
    expect(decisions).toContainEqual({ kind: 'split', request: carrier, at: 3 * MiB });
    expect(issued(decisions)[0]).toMatchObject({ mirror: near, start: 3 * MiB });
  });

  it('cuts a slow block bringing the first missing byte after 2 s of its bytes when another mirror could take the rest (issue 26)', () => {
    // Two mirrors at 103 kB/s; the primary's first MiB, asked before the player came, has reached 300 kB;
    // the other mirror is busy with the window's bytes after that MiB.
    const s1 = mirror('s1', { rate: 103_000, inFlight: 1, rttMs: 20, primary: true });
    const s2 = mirror('s2', { rate: 103_000, inFlight: 1, rttMs: 20 });
    const first = request(s1, 0, 1 * MiB, { pos: 300_000, lastByteAt: NOW });
    const later = request(s2, 1 * MiB, 1 * MiB + 136 * KiB, { pos: 1 * MiB + 40 * KiB, urgent: true, lastByteAt: NOW });
    const { decisions } = streamingDecisions(
      context([s1, s2], [first, later], [at(200_000, 1_360_000, 136_000)], [{ start: 0, end: 300_000 }]),
    );
    // 300,000 + 2 s × 103 kB/s = 506,000, up to the next 64 KiB boundary.
    expect(decisions).toContainEqual({ kind: 'split', request: first, at: 512 * KiB });
    expect(decisions.some((d) => d.kind === 'cut' && d.request === first)).toBe(false);
  });

  it('leaves a slow block whole on a single mirror, or when it ends within 2 s', () => {
    const only = mirror('s1', { rate: 103_000, inFlight: 1, rttMs: 20 });
    const first = request(only, 0, 1 * MiB, { pos: 300_000, lastByteAt: NOW });
    const alone = streamingDecisions(context([only], [first], [at(200_000, 1_360_000, 136_000)], [{ start: 0, end: 300_000 }]));
    expect(alone.decisions.some((d) => d.kind === 'split')).toBe(false);

    const s2 = mirror('s2', { rate: 103_000, inFlight: 1, rttMs: 20 });
    const nearEnd = request(only, 0, 1 * MiB, { pos: 900_000, lastByteAt: NOW });
    const busy = request(s2, 1 * MiB, 1 * MiB + 136 * KiB, { pos: 1 * MiB + 40 * KiB, urgent: true, lastByteAt: NOW });
    const soon = streamingDecisions(context([only, s2], [nearEnd, busy], [at(800_000, 1_360_000, 136_000)], [{ start: 0, end: 900_000 }]));
    expect(soon.decisions.some((d) => d.kind === 'split')).toBe(false);
  });

  it('does not split a request whose mirror has no measured rate yet', () => {
    const fresh = mirror('fresh', { rate: 0, inFlight: 1, rttMs: 30 });
    const carrier = request(fresh, 0, 8 * MiB, { issuedAt: NOW - 10 });
    const { decisions } = streamingDecisions(context([fresh], [carrier], [at(2 * MiB)]));
    expect(decisions.some((d) => d.kind === 'split')).toBe(false);
  });

  it('never cuts the primary inside its first bytes while they are the reference', () => {
    const primary = mirror('p', { rate: 10 * KiB, inFlight: 1, primary: true, rttMs: 10 });
    const first = request(primary, 0, 1 * MiB, { pos: 100, lastByteAt: NOW });
    const { decisions } = streamingDecisions({ ...context([primary], [first], [at(8 * KiB)]), referencePending: true });
    expect(decisions.some((d) => d.kind === 'split' || d.kind === 'cut')).toBe(false);
  });

  it('serves two players on one job: both windows are requested, nearest first', () => {
    const a = mirror('a', { rate: 4 * MiB, rttMs: 10 });
    const b = mirror('b', { rate: 4 * MiB, rttMs: 10 });
    const { decisions } = streamingDecisions(context([a, b], [], [at(0, 1 * MiB), at(40 * MiB, 1 * MiB)]));
    const starts = issued(decisions).map((d) => (d.kind === 'issue' ? d.start : -1));
    expect(starts).toContain(0);
    expect(starts).toContain(40 * MiB);
  });

  it("gives the most recently moved player the mirror: another player's request there is cut", () => {
    const server = mirror('s', { rate: 72_000, inFlight: 1, rttMs: 20 });
    const old = request(server, 200_000, 460_000, { pos: 250_000, urgent: true, lastByteAt: NOW });
    const { decisions } = streamingDecisions(
      context([server], [old], [at(1_700_000, 512 * KiB, 36_000), at(200_000, 512 * KiB, 36_000)], [{ start: 0, end: 250_000 }]),
    );
    expect(issued(decisions)[0]).toMatchObject({ mirror: server, start: 1_700_000 });
    expect(decisions).toContainEqual({ kind: 'cut', request: old });
  });

  it('reserves a mirror busy with the window (e.g. the index at the end) so it takes no far block meanwhile', () => {
    const server = mirror('s', { rate: 72_000, inFlight: 1, rttMs: 20 });
    const index = request(server, 2_293_760, 2_325_533, { urgent: true, issuedAt: NOW - 10, lastByteAt: NOW });
    const plan = { ...context([server], [index], [at(1_700_000, 1 * MiB, 36_000)]), plan: new Plan(2_325_533, []) };
    const { decisions, reserved } = streamingDecisions(plan);
    expect(issued(decisions)).toEqual([]);
    expect(reserved.has(server)).toBe(true);
  });

  it('requests the rest of a window nearest first, one request at a time per mirror, and reserves those mirrors', () => {
    const slow = mirror('slow', { rate: 1 * MiB });
    const fast = mirror('fast', { rate: 4 * MiB });
    const idle = mirror('idle', { rate: 4 * MiB, backoffUntil: NOW + 1000 });
    const { decisions, reserved } = streamingDecisions(context([slow, fast, idle], [], [at(10 * MiB)]));
    const blocks = issued(decisions);
    expect(blocks[0]).toMatchObject({ mirror: fast, start: 10 * MiB });
    // A quarter second at each mirror's rate (bitrate unknown): 1 MiB, then 256 KiB; the next
    // goes out when these are nearly done, so it does not share their bandwidth.
    expect(blocks.map((d) => d.mirror)).toEqual([fast, slow]);
    for (let i = 1; i < blocks.length; i++) expect((blocks[i] as { start: number }).start).toBe((blocks[i - 1] as { end: number }).end);
    expect(reserved).toEqual(new Set([slow, fast]));
  });

  it('pipelines: the next request goes out when the last one is two round trips from done', () => {
    const m = mirror('m', { rate: 1 * MiB, inFlight: 1, rttMs: 50 });
    const working = request(m, 0, 256 * KiB, { pos: 64 * KiB, lastByteAt: NOW });
    expect(issued(streamingDecisions(context([m], [working], [at(0)], [{ start: 0, end: 64 * KiB }])).decisions)).toEqual([]);
    const finishing = request(m, 0, 256 * KiB, { pos: 200 * KiB, lastByteAt: NOW });
    const next = issued(streamingDecisions(context([m], [finishing], [at(0)], [{ start: 0, end: 200 * KiB }])).decisions);
    expect(next[0]).toMatchObject({ mirror: m, start: 256 * KiB });
  });

  it("pipelines by the request's own pace when it outruns its mirror's recent rate (a far server: slow starts between requests)", () => {
    // 300 ms away; the mirror's recent rate, 100 kB/s, counts the round trips and slow starts between its requests.
    const far = mirror('far', { rate: 100_000, inFlight: 1, rttMs: 300 });
    // Sent 800 ms ago, its bytes began 500 ms ago: 120 KiB since (240 KiB/s), 100 KiB to go, about 0.4 s at that pace.
    const fast = request(far, 0, 220 * KiB, { pos: 120 * KiB, issuedAt: NOW - 800, lastByteAt: NOW });
    const next = issued(streamingDecisions(context([far], [fast], [at(0)], [{ start: 0, end: 120 * KiB }])).decisions);
    expect(next[0]).toMatchObject({ mirror: far, start: 220 * KiB });
    // At the mirror's rate it would still have a second to go: the next request waits.
    const steady = request(far, 0, 220 * KiB, { pos: 120 * KiB, issuedAt: NOW - 1_560, lastByteAt: NOW });
    expect(issued(streamingDecisions(context([far], [steady], [at(0)], [{ start: 0, end: 120 * KiB }])).decisions)).toEqual([]);
  });

  it('cuts far requests only on the mirrors carrying the window, and none once the window is stored', () => {
    const busy = mirror('busy', { rate: 1 * MiB, inFlight: 1 });
    const other = mirror('other', { rate: 1 * MiB, inFlight: 1, backoffUntil: NOW + 1000 });
    const far = request(busy, 40 * MiB, 48 * MiB, { pos: 41 * MiB });
    const elsewhere = request(other, 50 * MiB, 52 * MiB, { pos: 51 * MiB });
    const plan = streamingDecisions(context([busy, other], [far, elsewhere], [at(0)]));
    expect(plan.decisions).toContainEqual({ kind: 'cut', request: far });
    expect(plan.decisions).not.toContainEqual({ kind: 'cut', request: elsewhere });
    expect(plan.freed).toEqual({ mirrors: new Set([busy]), at: 0 });
    const stored = streamingDecisions(context([busy, other], [far, elsewhere], [at(0)], [{ start: 0, end: 2 * MiB }]));
    expect(stored.decisions.some((d) => d.kind === 'cut')).toBe(false);
    expect(stored.reserved.size).toBe(0);
    expect(stored.freed).toBeUndefined();
  });

  it('holds every usable mirror while a window has bytes no request claims: far blocks taken in between are cut (issue 26)', () => {
    // Firefox's player read the Cues at the end (a window stored at once), so s1 filled its connections with
    // blocks in order near the old playhead; then the seek target came, and s2 alone carried it at 0.75× the bitrate.
    const s1 = mirror('s1', { rate: 103_000, inFlight: 6, rttMs: 20, primary: true });
    const s2 = mirror('s2', { rate: 103_000, inFlight: 1, rttMs: 20 });
    const backup = mirror('backup', { rate: 103_000, rttMs: 20, backoffUntil: NOW + 1000 });
    const inOrder = Array.from({ length: 6 }, (_, i) => request(s1, (2 + i / 8) * MiB, (2 + (i + 1) / 8) * MiB, { issuedAt: NOW - 30 }));
    const target = request(s2, 12_626_121, 12_713_984, { pos: 12_626_121, urgent: true, issuedAt: NOW - 20 });
    const { decisions, reserved, freed } = streamingDecisions(
      context([s1, s2, backup], [...inOrder, target], [at(12_626_121, 4 * MiB, 137_000)], [{ start: 0, end: 2 * MiB }]),
    );
    for (const r of inOrder) expect(decisions).toContainEqual({ kind: 'cut', request: r });
    expect(reserved).toEqual(new Set([s1, s2]));
    expect(freed?.mirrors).toEqual(new Set([s1]));
    // Once the window's bytes are all claimed, a mirror may fetch far blocks again.
    const claimed = request(s1, 12_713_984, 12_626_121 + 4 * MiB, { urgent: true, issuedAt: NOW - 10 });
    const later = streamingDecisions(context([s1, s2], [target, claimed], [at(12_626_121, 4 * MiB, 137_000)]));
    expect(later.decisions.some((d) => d.kind === 'cut')).toBe(false);
  });

  it('frees a mirror for a seek that no request carries when the window is full: its far requests are cut', () => {
    // After the index at the end was read, the element had no position for a moment: the engine took
    // two blocks in order near the old playhead, filling the window; then the seek target came.
    const server = mirror('s', { rate: 72_000, inFlight: 2, rttMs: 20 });
    const inOrder = request(server, 219_455, 458_752, { pos: 230_000, issuedAt: NOW - 30, lastByteAt: NOW });
    const next = request(server, 458_752, 720_896, { pos: 468_000, issuedAt: NOW - 30, lastByteAt: NOW });
    const { decisions, reserved, freed } = streamingDecisions({
      ...context([server], [inOrder, next], [at(1_703_936, 512 * KiB, 36_000)], [{ start: 0, end: 219_455 }]),
      windowRoom: 0,
    });
    expect(decisions).toContainEqual({ kind: 'cut', request: inOrder });
    expect(decisions).toContainEqual({ kind: 'cut', request: next });
    expect(reserved.has(server)).toBe(true);
    // Held for the seek's byte on later pumps too (FreedMirrors), not only on this one.
    expect(freed).toEqual({ mirrors: new Set([server]), at: 1_703_936 });
  });

  it('cuts nothing for bytes that arrived and are being stored: no request there needs a connection', () => {
    // The element read the index at the end: the request that brought it is storing its last record, and two
    // blocks near the old playhead fill the window. Cutting them would only see them taken again, each pump.
    const server = mirror('s', { rate: 72_000, inFlight: 2, rttMs: 20 });
    const inOrder = request(server, 1_625_744, 1_638_400, { issuedAt: NOW - 5, lastByteAt: NOW - 5 });
    const next = request(server, 1_646_332, 2_621_440, { issuedAt: NOW - 5, lastByteAt: NOW - 5 });
    const size = 64 * MiB;
    const storing = { start: size - 9189, end: size };
    const base = context([server], [inOrder, next], [at(storing.start, 2 * MiB, 36_000)], [{ start: 0, end: 1_625_744 }]);
    const { decisions, freed } = streamingDecisions({ ...base, claims: [...base.claims, storing], windowRoom: 0 });
    expect(decisions.filter((d) => d.kind === 'cut')).toEqual([]);
    expect(freed).toBeUndefined();
  });

  it("lets the request at the player's first missing byte have its mirror alone: a later one there is cut until it is nearly done", () => {
    // The first frame: two blocks went out before the player attached and share the server's bandwidth.
    const server = mirror('s', { rate: 72_000, inFlight: 2, rttMs: 20 });
    const first = request(server, 0, 1 * MiB, { pos: 20_000, issuedAt: NOW - 300, lastByteAt: NOW });
    const second = request(server, 1 * MiB, 2 * MiB, { pos: 1 * MiB + 18_000, issuedAt: NOW - 280, lastByteAt: NOW });
    const { decisions } = streamingDecisions(context([server], [first, second], [at(0)], [{ start: 0, end: 20_000 }]));
    expect(decisions).toContainEqual({ kind: 'cut', request: second });
    expect(decisions).not.toContainEqual({ kind: 'cut', request: first });
    expect(decisions).toContainEqual({ kind: 'stream', request: first });
    // Pipelined: once the first is two round trips from done, the next one on the mirror stays.
    const finishing = request(server, 0, 1 * MiB, { pos: 1 * MiB - 2_000, issuedAt: NOW - 9000, lastByteAt: NOW });
    const kept = streamingDecisions(context([server], [finishing, second], [at(0)], [{ start: 0, end: 1 * MiB - 2_000 }]));
    expect(kept.decisions.some((d) => d.kind === 'cut')).toBe(false);
  });

  it('sizes urgent requests by playback time: a second of media, growing with the buffer', () => {
    const m = mirror('m', { rate: 10 * MiB });
    expect(urgentBlockBytes(m, at(0, 4 * MiB, 200 * KiB), 0)).toBe(200 * KiB);
    expect(urgentBlockBytes(m, at(0, 4 * MiB, 200 * KiB), 2 * MiB)).toBe(512 * KiB);
    // Unknown bitrate: a quarter second at the mirror's rate, within bounds.
    expect(urgentBlockBytes(m, at(0), 0)).toBe(2.5 * MiB);
    expect(urgentBlockBytes(mirror('slow', { rate: 10 * KiB }), at(0), 0)).toBe(64 * KiB);
  });
});
