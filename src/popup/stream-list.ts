import type { StreamRow, StreamVariantView } from '../messages';
import { h, setText } from '../pages-shared/dom';
import { KeyedRows } from './keyed-rows';
import { formatDuration, formatSize } from '../words/format';
import { t } from '../words/i18n';
import { REFUSAL_WORDS } from '../words/stream-words';

/**
 * The video streams the open tabs loaded, under their own heading: the page's title, the picture
 * size, duration, estimated size and host, why one cannot be downloaded, and Download. Hidden while
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

  /** `variant`: the index of the quality chosen in the row's `variants`, when it lists several. */
  constructor(private readonly download: (row: StreamRow, button: HTMLButtonElement, variant?: number) => void) {
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
      row,
    };
    elements.download.addEventListener('click', () =>
      this.download(elements.row, elements.download, elements.variant.hidden ? undefined : elements.variant.selectedIndex),
    );
    elements.item.append(
      h('div', { class: 'line job-head' }, elements.title),
      elements.figures,
      elements.refused,
      h('div', { class: 'actions', role: 'group' }, elements.variant, elements.download),
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
    setText(elements.figures, [picture, duration, size, row.host, unread].filter(Boolean).join(' · '));
    elements.refused.hidden = row.refused === undefined;
    setText(elements.refused, row.refused ? t(REFUSAL_WORDS[row.refused]) : '');
    elements.download.hidden = row.refused !== undefined;
    this.showVariants(elements, row);
    const label = `${t('actionDownloadStream')} ${row.title}`;
    if (elements.download.getAttribute('aria-label') !== label) elements.download.setAttribute('aria-label', label);
  }
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
  /** The row as last shown: a click downloads what the user saw. */
  row: StreamRow;
}
