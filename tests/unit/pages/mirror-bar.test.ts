// @vitest-environment happy-dom
import { describe, expect, it } from 'vitest';
import type { MirrorContribution } from '../../../src/messages';
import { MirrorBar, mirrorSegments, segmentText } from '../../../src/popup/mirror-bar';

const source = (host: string, bytes: number, extra: Partial<MirrorContribution> = {}): MirrorContribution => ({
  url: `https://${host}/file.iso`,
  host,
  bytes,
  rate: 0,
  ...extra,
});

describe('mirrorSegments', () => {
  it('gives each source its share of the bytes, adding up to 100', () => {
    const segments = mirrorSegments([source('a.example', 600), source('b.example', 300), source('c.example', 100)]);
    expect(segments.map((s) => s.percent)).toEqual([60, 30, 10]);
    expect(segments.map((s) => s.colour)).toEqual(['source-0', 'source-1', 'source-2']);
  });

  it('is all zero before the first byte', () => {
    expect(mirrorSegments([source('a.example', 0), source('b.example', 0)]).map((s) => s.percent)).toEqual([0, 0]);
  });

  it('keeps dropped sources with their bytes, in the dropped colour', () => {
    const [kept, dropped] = mirrorSegments([
      source('a.example', 750),
      source('bad.example', 250, { dropped: { kind: 'other-bytes', at: 0, primary: 'https://a.example/f' } }),
    ]);
    expect(kept!.percent).toBe(75);
    expect(dropped!.percent).toBe(25);
    expect(dropped!.colour).toBe('source-dropped');
    expect(segmentText(dropped!)).toBe(
      'bad.example · 250 B · 25% · dropped: It serves other bytes than a.example (the first difference is at byte 0).',
    );
  });

  it('says the rate of sources still serving', () => {
    const [segment] = mirrorSegments([source('a.example', 2 * 2 ** 20, { rate: 1.5 * 2 ** 20 })]);
    expect(segmentText(segment!)).toBe('a.example · 2 MB · 100% · 1.5 MB/s');
  });

  it('says how many connections each server uses while the job runs', () => {
    const [segment] = mirrorSegments([source('a.example', 2 * 2 ** 20, { rate: 1.5 * 2 ** 20, connections: 6 })]);
    expect(segmentText(segment!)).toBe('a.example · 2 MB · 100% · 1.5 MB/s · 6 connections');
  });
});

describe('MirrorBar', () => {
  it('sets segment widths and one legend line per source', () => {
    const bar = new MirrorBar([source('a.example', 600), source('b.example', 400)]);
    const widths = [...bar.element.querySelectorAll<HTMLElement>('.segment')].map((s) => s.style.width);
    expect(widths).toEqual(['60.00%', '40.00%']);
    expect(bar.element.querySelectorAll('.mirror-legend li')).toHaveLength(2);
    expect(bar.element.hidden).toBe(false);
  });

  it('stays hidden for a single healthy source', () => {
    expect(new MirrorBar([source('a.example', 600)]).element.hidden).toBe(true);
    expect(new MirrorBar([source('a.example', 600, { dropped: { kind: 'other-digest' } })]).element.hidden).toBe(false);
    // One server with more connections than the two it starts with: the line says how many.
    expect(new MirrorBar([source('a.example', 600, { connections: 8 })]).element.hidden).toBe(false);
  });

  it('updates widths in place while the sources stay the same', () => {
    const bar = new MirrorBar([source('a.example', 500), source('b.example', 500)]);
    const first = bar.element.querySelector('.segment');
    bar.update([source('a.example', 900), source('b.example', 100)]);
    expect(bar.element.querySelector('.segment')).toBe(first);
    expect((first as HTMLElement).style.width).toBe('90.00%');
  });

  it('says in its tooltip why a server has the connections it has', () => {
    const bar = new MirrorBar([source('a.example', 600, { connections: 16, connectionsWhy: { kind: 'at-max', count: 16 } })]);
    expect(bar.element.querySelector<HTMLElement>('.segment')!.title).toBe(
      'https://a.example/file.iso\na.example · 600 B · 100% · 16 connections\nStitch uses 16 connections, the most allowed.',
    );
  });

  it('marks a source dropped later in the legend', () => {
    const bar = new MirrorBar([source('a.example', 500), source('b.example', 500)]);
    bar.update([source('a.example', 500), source('b.example', 500, { dropped: { kind: 'other-digest' } })]);
    const line = bar.element.querySelectorAll('.mirror-legend li')[1]!;
    expect(line.classList.contains('dropped')).toBe(true);
    expect(line.textContent).toContain('dropped: It announces another checksum for the file.');
  });
});
