import { describe, expect, it } from 'vitest';
import { MirrorState } from '../../../../src/engine/scheduler/loop/mirror-state';
import { FakeClock } from '../../../support/fake-clock';

const newMirror = (clock = new FakeClock()) => new MirrorState(0, 'http://a.example/f.bin', true, {}, clock);

describe('MirrorState: a refusal or a reset', () => {
  it('takes a connection closed before answering, while the others go on, for the server refusing one more', () => {
    const mirror = newMirror();
    mirror.broke(1_000);
    mirror.closedBeforeAnswering(1_000, 3);
    // Decided once the moment is past (other connections may still break with it).
    mirror.observeConnections(1_050, 0);
    expect(mirror.connectionCount.serverLimit).toBeUndefined();
    mirror.observeConnections(1_150, 0);
    expect(mirror.connectionCount.serverLimit).toBe(3);
    expect(mirror.connectionCount.reason).toEqual({ kind: 'server-allows', count: 3, status: undefined });
  });

  it('takes connections that break together for a reset: no limit is remembered', () => {
    const mirror = newMirror();
    // Three bodies cut and one connection closed before its headers, within a few milliseconds.
    for (const at of [1_000, 1_002, 1_004]) mirror.broke(at);
    mirror.broke(1_010);
    mirror.closedBeforeAnswering(1_010, 3);
    mirror.observeConnections(1_200, 0);
    expect(mirror.connectionCount.serverLimit).toBeUndefined();
    // Twice the count while the new connections warm up (two round trips here), then the count again.
    expect(mirror.connections(1_200)).toBe(4);
    expect(mirror.connections(1_300)).toBe(2);
  });

  it('takes the break of the only body on its way for a reset too; not one while others go on', () => {
    const mirror = newMirror();
    mirror.broke(1_000);
    mirror.observeConnections(1_050, 0);
    expect(mirror.connections(1_050)).toBe(2);
    mirror.broke(2_000, true);
    expect(mirror.connections(2_000)).toBe(4);
    expect(mirror.connections(2_300)).toBe(2);
  });
});

describe('MirrorState: a far server', () => {
  it('is known far once its first request has waited 120 ms without an answer, before any header', () => {
    const mirror = newMirror();
    mirror.asked(1_000);
    mirror.observeConnections(1_025, 0);
    mirror.observeConnections(1_100, 0);
    expect(mirror.connections(1_100)).toBe(2);
    mirror.asked(1_110); // a later request does not restart the wait
    mirror.observeConnections(1_125, 0);
    expect(mirror.connections(1_125)).toBe(8);
    expect(mirror.connectionCount.reason).toEqual({ kind: 'far-start', count: 8, ms: 125, answered: false });
  });

  it('answering in time is what counts: a near server keeps its first count', () => {
    const mirror = newMirror();
    mirror.asked(1_000);
    mirror.observeRtt(20);
    mirror.observeConnections(1_025, 0);
    mirror.observeConnections(1_200, 0);
    expect(mirror.connections(1_200)).toBe(2);
  });
});

describe('MirrorState: the share of time its requests wait for their headers', () => {
  it('follows the recent requests: none measured is none waiting', () => {
    const mirror = newMirror();
    expect(mirror.waitShare).toBe(0);
    // 300 ms to the headers of a request that took 320 ms, again and again: the share nears 15/16.
    for (let i = 0; i < 20; i++) mirror.observeWait(300, 320);
    expect(mirror.waitShare).toBeCloseTo(300 / 320, 2);
    // Long blocks from then on: it falls.
    for (let i = 0; i < 4; i++) mirror.observeWait(300, 3000);
    expect(mirror.waitShare).toBeLessThan(0.4);
    expect(mirror.waitShare).toBeGreaterThan(0.1);
  });

  it('counts the wait up to the shortest round trip seen: a busy client is not the server', () => {
    const mirror = newMirror();
    mirror.observeRtt(10);
    // Headers after 200 ms of a 250 ms request, on a server 10 ms away.
    for (let i = 0; i < 20; i++) mirror.observeWait(200, 250);
    expect(mirror.waitShare).toBeCloseTo(10 / 250, 2);
  });
});
