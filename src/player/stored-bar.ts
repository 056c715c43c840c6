import { h } from '../pages-shared/dom';
import { formatPercent, formatSize } from '../words/format';
import { formatCount, t } from '../words/i18n';

type Range = { start: number; end: number };

/** Seconds moved by one arrow key on the bar, as on the page (←/→). */
const ARROW_SECONDS = 5;

/**
 * A bar of what is stored: one segment per stored byte range, and a mark where the media
 * plays (its time as a share of the duration: bytes and time match only on average). It is also
 * the position slider: a click seeks there, and with focus ←/→ seek 5 s, Home/End to either end.
 * The stored ranges are also in data-stored ("start-end,…") for tests, and in words, with the
 * position, for screen readers.
 */
export class StoredBar {
  readonly element = h('div', {
    class: 'stored-bar',
    'data-testid': 'player-stored',
    role: 'slider',
    tabindex: 0,
    'aria-label': t('playerPosition'),
    'aria-valuemin': 0,
  });
  private readonly segments = h('div', { class: 'segments' });
  private readonly playhead = h('div', { class: 'playhead' });
  private key = '';
  private storedText = '';
  private seconds = 0;
  private duration = Number.NaN;

  constructor(private readonly seek: (seconds: number) => void) {
    this.element.append(this.segments, this.playhead);
    this.element.addEventListener('click', (event) => {
      const box = this.element.getBoundingClientRect();
      if (box.width > 0) this.seekTo(((event.clientX - box.left) / box.width) * this.duration);
    });
    this.element.addEventListener('keydown', (event) => this.onKey(event));
    this.update([], undefined);
    this.setPosition(0, Number.NaN);
  }

  update(stored: readonly Range[], size: number | undefined): void {
    const key = `${size}:${stored.map((r) => `${r.start}-${r.end}`).join(',')}`;
    if (key === this.key) return;
    this.key = key;
    this.element.dataset.stored = stored.map((r) => `${r.start}-${r.end}`).join(',');
    const total = stored.reduce((sum, r) => sum + r.end - r.start, 0);
    if (size === undefined || size === 0) {
      this.segments.replaceChildren();
      this.storedText = t('storedSize', formatSize(total));
    } else {
      this.segments.replaceChildren(
        ...stored.map((r) =>
          h('div', { class: 'segment', style: `left:${(r.start / size) * 100}%;width:${((r.end - r.start) / size) * 100}%` }),
        ),
      );
      const percent = formatPercent(total, size);
      this.storedText =
        stored.length > 1
          ? t('storedShareParts', percent, formatSize(size), formatCount(stored.length))
          : t('storedShare', percent, formatSize(size));
    }
    this.describe();
  }

  /** Where the media plays; the mark is hidden while the duration is unknown. */
  setPosition(seconds: number, duration: number): void {
    this.seconds = seconds;
    this.duration = duration;
    const known = Number.isFinite(duration) && duration > 0;
    this.playhead.hidden = !known;
    if (known) this.playhead.style.left = `${Math.min(1, Math.max(0, seconds / duration)) * 100}%`;
    this.element.setAttribute('aria-valuemax', String(known ? Math.round(duration) : 0));
    this.element.setAttribute('aria-valuenow', String(known ? Math.round(Math.min(seconds, duration)) : 0));
    this.describe();
  }

  private describe(): void {
    const known = Number.isFinite(this.duration) && this.duration > 0;
    const position = known ? t('playerPositionOf', clockText(this.seconds), clockText(this.duration)) : '';
    this.element.setAttribute('aria-valuetext', [position, this.storedText].filter(Boolean).join(' · '));
  }

  private onKey(event: KeyboardEvent): void {
    const to: Record<string, number> = {
      ArrowLeft: this.seconds - ARROW_SECONDS,
      ArrowDown: this.seconds - ARROW_SECONDS,
      ArrowRight: this.seconds + ARROW_SECONDS,
      ArrowUp: this.seconds + ARROW_SECONDS,
      Home: 0,
      End: this.duration,
    };
    if (!(event.key in to)) return;
    event.preventDefault();
    this.seekTo(to[event.key]!);
  }

  private seekTo(seconds: number): void {
    if (!Number.isFinite(this.duration) || this.duration <= 0 || !Number.isFinite(seconds)) return;
    const to = Math.min(this.duration, Math.max(0, seconds));
    // The slider is where the user sent it at once: the next key moves on from there, not from the
    // position the media reported before the seek (its timeupdate comes later).
    this.setPosition(to, this.duration);
    this.seek(to);
  }
}

/** `1:05`, `1:02:03`: a media time as players show it. */
function clockText(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const two = (n: number) => String(n).padStart(2, '0');
  const hours = Math.floor(s / 3600);
  const minutes = Math.floor((s % 3600) / 60);
  return hours > 0 ? `${hours}:${two(minutes)}:${two(s % 60)}` : `${minutes}:${two(s % 60)}`;
}
