import { h } from '../pages-shared/dom';
import { formatPercent, formatSize } from '../pages-shared/format';
import { formatCount, t } from '../pages-shared/i18n';

type Range = { start: number; end: number };

/**
 * A bar of what is stored: one segment per stored byte range, and a mark where the media
 * plays (its time as a share of the duration: bytes and time match only on average). The
 * stored ranges are also in data-stored ("start-end,…") for tests and in words for screen
 * readers.
 */
export class StoredBar {
  readonly element = h('div', { class: 'stored-bar', 'data-testid': 'player-stored', role: 'img' });
  private readonly segments = h('div', { class: 'segments' });
  private readonly playhead = h('div', { class: 'playhead' });
  private key = '';

  constructor() {
    this.element.append(this.segments, this.playhead);
    this.update([], undefined);
  }

  update(stored: readonly Range[], size: number | undefined): void {
    const key = `${size}:${stored.map((r) => `${r.start}-${r.end}`).join(',')}`;
    if (key === this.key) return;
    this.key = key;
    this.element.dataset.stored = stored.map((r) => `${r.start}-${r.end}`).join(',');
    const total = stored.reduce((sum, r) => sum + r.end - r.start, 0);
    if (size === undefined || size === 0) {
      this.segments.replaceChildren();
      this.element.setAttribute('aria-label', t('storedSize', formatSize(total)));
      return;
    }
    this.segments.replaceChildren(
      ...stored.map((r) =>
        h('div', { class: 'segment', style: `left:${(r.start / size) * 100}%;width:${((r.end - r.start) / size) * 100}%` }),
      ),
    );
    const percent = formatPercent(total, size);
    const label =
      stored.length > 1
        ? t('storedShareParts', percent, formatSize(size), formatCount(stored.length))
        : t('storedShare', percent, formatSize(size));
    this.element.setAttribute('aria-label', label);
  }

  /** Where the media plays, 0–1; undefined hides the mark. */
  setPlayhead(fraction: number | undefined): void {
    this.playhead.hidden = fraction === undefined || !Number.isFinite(fraction);
    if (!this.playhead.hidden) this.playhead.style.left = `${Math.min(1, Math.max(0, fraction!)) * 100}%`;
  }
}
