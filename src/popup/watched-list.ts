import type { WatchedRow } from '../messages';
import { h, setText } from '../pages-shared/dom';
import { KeyedRows } from './keyed-rows';
import { formatPercent, formatRate, formatSize } from '../words/format';
import { t, type MessageKey } from '../words/i18n';

const STATE_WORDS: Record<WatchedRow['state'], MessageKey> = {
  downloading: 'watchedStateDownloading',
  resuming: 'watchedStateResuming',
  paused: 'watchedStatePaused',
};

/** The row's look: the job rows' styles for a bar that moves (running) or waits (paused). */
const STATE_LOOK: Record<WatchedRow['state'], 'running' | 'paused'> = {
  downloading: 'running',
  resuming: 'paused',
  paused: 'paused',
};

/**
 * The downloads left with the browser, which Stitch watches (and rescues if they break or stall),
 * under their own heading: name and host, the state in words, a progress bar, size and rate, and
 * Take over. Hidden while nothing is watched.
 */
export class WatchedList {
  readonly element = h('section', { class: 'watched-list', 'aria-labelledby': 'watched-title', 'data-testid': 'watched-list' });
  private readonly list = h('ul', { class: 'jobs' });
  private readonly rows = new KeyedRows(
    this.list,
    (row: WatchedRow) => String(row.downloadId),
    (row: WatchedRow) => this.create(row),
  );

  constructor(private readonly takeOver: (row: WatchedRow, button: HTMLButtonElement) => void) {
    this.element.hidden = true;
    this.element.append(h('h2', { id: 'watched-title', class: 'list-title' }, t('watchedListTitle')), this.list);
  }

  render(rows: readonly WatchedRow[]): void {
    this.element.hidden = rows.length === 0;
    this.rows.render(rows, (elements, row) => this.update(elements, row));
  }

  private create(row: WatchedRow): RowElements {
    const elements: RowElements = {
      item: h('li', { class: 'job watched-row', 'data-testid': 'watched-row', 'data-download-id': String(row.downloadId) }),
      name: h('span', { class: 'name filename', 'data-testid': 'watched-name' }),
      state: h('span', { 'data-testid': 'watched-state' }),
      progress: h('progress', { 'data-testid': 'watched-progress' }),
      figures: h('div', { class: 'line muted', 'data-testid': 'watched-figures' }),
      takeOver: h('button', { type: 'button', 'data-testid': 'watched-take-over' }, t('actionTakeOver')),
      row,
    };
    elements.takeOver.addEventListener('click', () => this.takeOver(elements.row, elements.takeOver));
    elements.item.append(
      h('div', { class: 'line job-head' }, elements.name, elements.state),
      elements.progress,
      elements.figures,
      h('div', { class: 'actions', role: 'group' }, elements.takeOver),
    );
    return elements;
  }

  private update(elements: RowElements, row: WatchedRow): void {
    elements.row = row;
    elements.item.dataset.state = STATE_LOOK[row.state];
    setText(elements.name, row.name);
    elements.name.title = row.url;
    setText(elements.state, t(STATE_WORDS[row.state]));
    elements.state.className = `state state-${STATE_LOOK[row.state]}`;
    const { progress } = elements;
    if (row.size !== undefined) {
      progress.max = row.size;
      progress.value = Math.min(row.received, row.size);
    } else {
      progress.removeAttribute('value'); // indeterminate: the size is not known
    }
    progress.setAttribute('aria-label', row.name);
    const size =
      row.size !== undefined
        ? t('sizeOfTotal', formatSize(row.received), formatSize(row.size), formatPercent(row.received, row.size))
        : formatSize(row.received);
    const rate = row.state === 'downloading' && row.bytesPerSecond > 0 ? formatRate(row.bytesPerSecond) : '';
    setText(elements.figures, [row.host, size, rate].filter(Boolean).join(' · '));
    const label = `${t('actionTakeOver')} ${row.name}`;
    if (elements.takeOver.getAttribute('aria-label') !== label) elements.takeOver.setAttribute('aria-label', label);
  }
}

interface RowElements {
  item: HTMLLIElement;
  name: HTMLSpanElement;
  state: HTMLSpanElement;
  progress: HTMLProgressElement;
  figures: HTMLDivElement;
  takeOver: HTMLButtonElement;
  /** The row as last shown: a click takes over what the user saw. */
  row: WatchedRow;
}
