import type { StreamRow, StreamVariantView } from '../messages';
import { h, setText } from '../pages-shared/dom';
import { KeyedRows } from './keyed-rows';
import { formatDuration, formatSize } from '../words/format';
import { t } from '../words/i18n';
import { REFUSAL_WORDS } from '../words/stream-words';

/** What the rows' buttons do: `variant` is the index of the quality chosen in the row's `variants`, when it lists several. */
export interface StreamActions {
  download(row: StreamRow, button: HTMLButtonElement, variant?: number): void;
  record(row: StreamRow, button: HTMLButtonElement): void;
  stop(row: StreamRow, button: HTMLButtonElement): void;
}

/**
 * The video streams the open tabs loaded, under their own heading: the page's title, the picture
 * size, duration, estimated size and host, why one cannot be downloaded, and Download; a live one
 * says so and offers Record, then its recording's length and size, and Stop and save. Hidden while
 * none was found.
 */
export class StreamList {
  readonly element = h('section', { class: 'stream-list', 'aria-labelledby': 'stream-title', 'data-testid': 'stream-list' });
  private readonly list = h('ul', { class: 'jobs' });
  private readonly rows = new KeyedRows(
    this.list,
    (row: StreamRow) => row.url,
    (row: StreamRow) => this.create(row),
  );

  constructor(private readonly actions: StreamActions) {
    this.element.hidden = true;
    this.element.append(h('h2', { id: 'stream-title', class: 'list-title' }, t('streamListTitle')), this.list);
  }

  render(rows: readonly StreamRow[]): void {
    this.element.hidden = rows.length === 0;
    this.rows.render(rows, (elements, row) => this.update(elements, row));
  }

  private create(row: StreamRow): RowElements {
    const elements: RowElements = {
      item: h('li', { class: 'job stream-row', 'data-testid': 'stream-row', 'data-url': row.url }),
      title: h('span', { class: 'name filename', 'data-testid': 'stream-title' }),
      figures: h('div', { class: 'line muted', 'data-testid': 'stream-figures' }),
      refused: h('div', { class: 'line error', 'data-testid': 'stream-refused' }),
      variant: h('select', { 'data-testid': 'stream-variant', 'aria-label': t('streamQuality') }),
      shownVariants: '',
      download: h('button', { type: 'button', 'data-testid': 'stream-download' }, t('actionDownloadStream')),
      record: h('button', { type: 'button', 'data-testid': 'stream-record' }, t('actionRecordStream')),
      stop: h('button', { type: 'button', 'data-testid': 'stream-stop' }, t('actionStopRecording')),
      row,
    };
    elements.download.addEventListener('click', () =>
      this.actions.download(elements.row, elements.download, elements.variant.hidden ? undefined : elements.variant.selectedIndex),
    );
    elements.record.addEventListener('click', () => this.actions.record(elements.row, elements.record));
    elements.stop.addEventListener('click', () => this.actions.stop(elements.row, elements.stop));
    elements.item.append(
      h('div', { class: 'line job-head' }, elements.title),
      elements.figures,
      elements.refused,
      h('div', { class: 'actions', role: 'group' }, elements.variant, elements.download, elements.record, elements.stop),
    );
    return elements;
  }

  private showVariants(elements: RowElements, row: StreamRow): void {
    const variants = row.refused === undefined ? (row.variants ?? []) : [];
    elements.variant.hidden = variants.length < 2;
    const shown = JSON.stringify(variants);
    if (shown === elements.shownVariants) return;
    elements.shownVariants = shown;
    elements.variant.replaceChildren(...variants.map((variant) => h('option', {}, variantLabel(variant))));
  }

  private update(elements: RowElements, row: StreamRow): void {
    elements.row = row;
    setText(elements.title, row.title);
    elements.title.title = row.url;
    const picture = row.width !== undefined && row.height !== undefined ? `${row.width}×${row.height}` : '';
    const duration = formatDuration(row.durationSeconds);
    const size = row.estimatedBytes !== undefined ? t('streamEstimate', formatSize(row.estimatedBytes)) : '';
    const unread = row.unread ? t('streamUnread') : '';
    const live = row.live ? t('streamLive') : '';
    const { recording } = row;
    const recorded =
      recording &&
      t(
        recording.saving ? 'streamRecordingSaving' : 'streamRecording',
        formatDuration(recording.seconds) || '0 sec',
        formatSize(recording.bytes),
      );
    setText(elements.figures, [live, picture, duration, size, row.host, unread, recorded].filter(Boolean).join(' · '));
    elements.refused.hidden = row.refused === undefined;
    setText(elements.refused, row.refused ? t(REFUSAL_WORDS[row.refused]) : '');
    elements.download.hidden = row.refused !== undefined || row.live === true;
    elements.record.hidden = row.refused !== undefined || row.live !== true || recording !== undefined;
    elements.stop.hidden = recording === undefined;
    elements.stop.disabled = recording?.saving === true;
    this.showVariants(elements, row);
    labelFor(elements.download, `${t('actionDownloadStream')} ${row.title}`);
    labelFor(elements.record, `${t('actionRecordStream')} ${row.title}`);
    labelFor(elements.stop, `${t('actionStopRecording')} ${row.title}`);
  }
}

function labelFor(button: HTMLButtonElement, label: string): void {
  if (button.getAttribute('aria-label') !== label) button.setAttribute('aria-label', label);
}

/** `1280×720 · about 250 MB`, or the bitrate's estimate alone. */
function variantLabel(variant: StreamVariantView): string {
  const picture = variant.width !== undefined && variant.height !== undefined ? `${variant.width}×${variant.height}` : '';
  const size = variant.estimatedBytes !== undefined ? t('streamEstimate', formatSize(variant.estimatedBytes)) : '';
  return [picture, size].filter(Boolean).join(' · ') || '?';
}

interface RowElements {
  item: HTMLLIElement;
  variant: HTMLSelectElement;
  /** The qualities the select shows, as JSON: rebuilt only when they change, so a choice stays. */
  shownVariants: string;
  title: HTMLSpanElement;
  figures: HTMLDivElement;
  refused: HTMLDivElement;
  download: HTMLButtonElement;
  record: HTMLButtonElement;
  stop: HTMLButtonElement;
  /** The row as last shown: a click downloads what the user saw. */
  row: StreamRow;
}
