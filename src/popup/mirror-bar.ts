import type { MirrorContribution } from '../messages';
import { h, setText } from '../pages-shared/dom';
import { formatPercent, formatRate, formatSize } from '../words/format';
import { connectionsWhyText, dropText } from '../words/failure-text';
import { plural, t } from '../words/i18n';

/** How many distinct colours the bar cycles through (classes source-0 … source-7 in popup.css). */
const COLOURS = 8;

export interface MirrorSegment extends MirrorContribution {
  /** Share of all bytes received, 0–100. */
  percent: number;
  /** Colour class of this source. */
  colour: string;
}

/** Each source's share of the bytes received so far; the shares add up to 100 (or are all 0). */
export function mirrorSegments(mirrors: readonly MirrorContribution[]): MirrorSegment[] {
  const total = mirrors.reduce((sum, m) => sum + Math.max(0, m.bytes), 0);
  return mirrors.map((mirror, i) => ({
    ...mirror,
    percent: total > 0 ? (Math.max(0, mirror.bytes) / total) * 100 : 0,
    colour: mirror.dropped ? 'source-dropped' : `source-${i % COLOURS}`,
  }));
}

/** One line per source: `host · 12 MB · 1.2 MB/s`, or why it was dropped. */
export function segmentText(segment: MirrorSegment): string {
  const parts = [segment.host, formatSize(segment.bytes)];
  if (segment.percent > 0) parts.push(formatPercent(Math.round(segment.percent), 100));
  // Addresses by host only: the line must fit the popup (the full URL is in the tooltip).
  if (segment.dropped) parts.push(t('sourceDropped', dropText(segment.dropped)));
  else if (segment.rate > 0) parts.push(formatRate(segment.rate));
  if (!segment.dropped && segment.connections) parts.push(plural(segment.connections, 'connectionsOne', 'connectionsOther'));
  return parts.join(' · ');
}

/**
 * A stacked bar of who served how much, with a legend that says the same in words (the bar
 * itself is hidden from screen readers). Updated in place so hovering a segment keeps its tooltip.
 */
export class MirrorBar {
  readonly element = h('div', { class: 'mirrors', 'data-testid': 'job-mirrors' });
  private key = '';
  private segments: HTMLElement[] = [];
  private lines: HTMLElement[] = [];

  constructor(mirrors: readonly MirrorContribution[]) {
    this.update(mirrors);
  }

  update(mirrors: readonly MirrorContribution[]): void {
    // One source tells little the progress bar does not; show the breakdown once there are more,
    // or when the one server gets more connections than the two it starts with.
    this.element.hidden = mirrors.length < 2 && !mirrors.some((m) => m.dropped || (m.connections ?? 0) > 2);
    const segments = mirrorSegments(mirrors);
    const key = segments.map((s) => `${s.url}|${s.colour}`).join('\n');
    if (key !== this.key) this.rebuild(segments, key);
    segments.forEach((segment, i) => {
      const text = segmentText(segment);
      const bar = this.segments[i]!;
      bar.style.width = `${segment.percent.toFixed(2)}%`;
      bar.classList.toggle('zero', segment.percent === 0);
      const why = segment.connectionsWhy ? `\n${connectionsWhyText(segment.connectionsWhy)}` : '';
      const title = `${segment.url}\n${text}${why}`;
      if (bar.title !== title) bar.title = title;
      setText(this.lines[i]!.querySelector('.legend-text')!, text);
    });
  }

  private rebuild(segments: MirrorSegment[], key: string): void {
    this.key = key;
    this.segments = segments.map((s) => h('span', { class: `segment ${s.colour}` }));
    this.lines = segments.map((s) =>
      h(
        'li',
        { class: s.dropped ? 'dropped' : undefined, title: s.url },
        h('span', { class: `swatch ${s.colour}`, 'aria-hidden': 'true' }),
        h('span', { class: 'legend-text' }),
      ),
    );
    this.element.replaceChildren(
      h('div', { class: 'mirror-bar', 'aria-hidden': 'true' }, ...this.segments),
      h('ul', { class: 'mirror-legend', 'aria-label': t('sourcesLabel') }, ...this.lines),
    );
  }
}
