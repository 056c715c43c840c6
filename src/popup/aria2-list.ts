import type { Aria2Action, Aria2Row, Aria2Trouble } from '../messages';
import { aria2ProblemText } from '../pages-shared/aria2-text';
import { append, h } from '../pages-shared/dom';
import { formatPercent, formatRate, formatSize } from '../pages-shared/format';
import { t, type MessageKey } from '../pages-shared/i18n';

const STATE_WORDS: Record<Aria2Row['state'], MessageKey> = {
  running: 'aria2StateRunning',
  waiting: 'aria2StateWaiting',
  paused: 'aria2StatePaused',
  done: 'aria2StateDone',
  failed: 'aria2StateFailed',
  removed: 'aria2StateRemoved',
};

/**
 * The downloads handed to aria2, under their own heading below Stitch's: name and host, state (with
 * aria2's reason when it failed), progress, and the actions that fit (Pause, Resume, Remove, and
 * Run in Stitch when aria2 failed or forgot it). When aria2 cannot be reached, one line says why.
 */
export class Aria2List {
  readonly element = h('section', { class: 'aria2-list', 'aria-labelledby': 'aria2-title', 'data-testid': 'aria2-list' });

  constructor(private readonly act: (gid: string, action: Aria2Action, button: HTMLButtonElement) => void) {
    this.element.hidden = true;
  }

  render(rows: readonly Aria2Row[], trouble: Aria2Trouble | undefined): void {
    this.element.hidden = rows.length === 0;
    if (rows.length === 0) return this.element.replaceChildren();
    const troubleLine =
      trouble && h('p', { class: 'error-text', role: 'status', 'data-testid': 'aria2-trouble' }, aria2ProblemText(trouble));
    this.element.replaceChildren();
    append(this.element, [
      h('h2', { id: 'aria2-title', class: 'list-title' }, t('aria2ListTitle')),
      troubleLine,
      h('ul', { class: 'jobs' }, ...rows.map((row) => this.row(row))),
    ]);
  }

  private row(row: Aria2Row): HTMLElement {
    const host = hostOf(row.url);
    const progress =
      row.totalBytes > 0
        ? row.state === 'done'
          ? formatSize(row.totalBytes)
          : t('sizeOfTotal', formatSize(row.doneBytes), formatSize(row.totalBytes), formatPercent(row.doneBytes, row.totalBytes))
        : '';
    const figures = [host, progress, row.state === 'running' && row.bytesPerSecond > 0 ? formatRate(row.bytesPerSecond) : '']
      .filter(Boolean)
      .join(' · ');
    const button = (action: Aria2Action, label: MessageKey) => {
      const element: HTMLButtonElement = h(
        'button',
        {
          type: 'button',
          'data-testid': `aria2-${action}`,
          'aria-label': `${t(label)} ${row.name}`,
          onclick: () => this.act(row.gid, action, element),
        },
        t(label),
      );
      return element;
    };
    const actions = [
      row.state === 'running' || row.state === 'waiting' ? button('pause', 'actionPause') : null,
      row.state === 'paused' || (row.state === 'failed' && row.problem === 'disk-full') ? button('resume', 'actionResume') : null,
      row.state === 'failed' || row.state === 'removed' ? button('run-here', 'actionRunInStitch') : null,
      button('remove', 'actionRemove'),
    ];
    return h(
      'li',
      { class: 'job aria2-row', 'data-testid': 'aria2-row', 'data-gid': row.gid },
      h(
        'div',
        { class: 'line' },
        h('span', { class: 'name', title: row.url }, row.name),
        h('span', { class: `state state-${row.state}`, 'data-testid': 'aria2-state' }, t(STATE_WORDS[row.state])),
      ),
      h('div', { class: 'line muted' }, figures),
      row.problem ? h('p', { class: 'error-text', 'data-testid': 'aria2-problem' }, aria2ProblemText(row.problem)) : null,
      h('div', { class: 'actions', role: 'group', 'aria-label': row.name }, ...actions),
    );
  }
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '';
  }
}
