import type { Aria2Action, Aria2Row, Aria2Trouble } from '../messages';
import { aria2ProblemText } from '../words/aria2-text';
import { h, setText } from '../pages-shared/dom';
import { KeyedRows } from './keyed-rows';
import { formatPercent, formatRate, formatSize } from '../words/format';
import { t, type MessageKey } from '../words/i18n';

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
 * Run in Stitch when aria2 failed, forgot it or does not answer). When aria2 cannot be reached, one line
 * says why.
 */
export class Aria2List {
  readonly element = h('section', { class: 'aria2-list', 'aria-labelledby': 'aria2-title', 'data-testid': 'aria2-list' });
  private readonly trouble = h('p', { class: 'error-text', role: 'status', 'data-testid': 'aria2-trouble' });
  private readonly list = h('ul', { class: 'jobs' });
  private readonly rows = new KeyedRows(
    this.list,
    (row: Aria2Row) => row.gid,
    (row: Aria2Row) => this.create(row),
  );

  constructor(private readonly act: (gid: string, action: Aria2Action, button: HTMLButtonElement) => void) {
    this.element.hidden = true;
    this.trouble.hidden = true;
    this.element.append(h('h2', { id: 'aria2-title', class: 'list-title' }, t('aria2ListTitle')), this.trouble, this.list);
  }

  render(rows: readonly Aria2Row[], trouble: Aria2Trouble | undefined): void {
    this.element.hidden = rows.length === 0;
    setText(this.trouble, trouble ? aria2ProblemText(trouble) : '');
    this.trouble.hidden = trouble === undefined;
    this.rows.render(rows, (elements, row) => this.update(elements, row, trouble !== undefined));
  }

  private create(row: Aria2Row): RowElements {
    const elements: RowElements = {
      item: h('li', { class: 'job aria2-row', 'data-testid': 'aria2-row', 'data-gid': row.gid }),
      name: h('span', { class: 'name' }),
      state: h('span', { 'data-testid': 'aria2-state' }),
      figures: h('div', { class: 'line muted' }),
      problem: h('p', { class: 'error-text', 'data-testid': 'aria2-problem' }),
      actions: h('div', { class: 'actions', role: 'group' }),
      actionsKey: '',
    };
    elements.item.append(h('div', { class: 'line' }, elements.name, elements.state), elements.figures, elements.problem, elements.actions);
    return elements;
  }

  /** `unreachable`: aria2 does not answer, so any unfinished download may be run in Stitch instead. */
  private update(elements: RowElements, row: Aria2Row, unreachable: boolean): void {
    setText(elements.name, row.name);
    elements.name.title = row.url;
    setText(elements.state, t(STATE_WORDS[row.state]));
    elements.state.className = `state state-${row.state}`;
    const progress =
      row.totalBytes > 0
        ? row.state === 'done'
          ? formatSize(row.totalBytes)
          : t('sizeOfTotal', formatSize(row.doneBytes), formatSize(row.totalBytes), formatPercent(row.doneBytes, row.totalBytes))
        : '';
    const rate = row.state === 'running' && row.bytesPerSecond > 0 ? formatRate(row.bytesPerSecond) : '';
    setText(elements.figures, [hostOf(row.url), progress, rate].filter(Boolean).join(' · '));
    setText(elements.problem, row.problem ? aria2ProblemText(row.problem) : '');
    elements.problem.hidden = row.problem === undefined;
    const actions: [Aria2Action, MessageKey][] = [];
    if (row.state === 'running' || row.state === 'waiting') actions.push(['pause', 'actionPause']);
    if (row.state === 'paused' || (row.state === 'failed' && row.problem === 'disk-full')) actions.push(['resume', 'actionResume']);
    if (row.state === 'failed' || row.state === 'removed' || (unreachable && row.state !== 'done'))
      actions.push(['run-here', 'actionRunInStitch']);
    actions.push(['remove', 'actionRemove']);
    const key = `${row.name}|${actions.map(([action]) => action).join()}`;
    if (key === elements.actionsKey) return;
    elements.actionsKey = key;
    elements.actions.setAttribute('aria-label', row.name);
    elements.actions.replaceChildren(
      ...actions.map(([action, label]) => {
        const button: HTMLButtonElement = h(
          'button',
          {
            type: 'button',
            'data-testid': `aria2-${action}`,
            'aria-label': `${t(label)} ${row.name}`,
            onclick: () => this.act(row.gid, action, button),
          },
          t(label),
        );
        return button;
      }),
    );
  }
}

interface RowElements {
  item: HTMLLIElement;
  name: HTMLSpanElement;
  state: HTMLSpanElement;
  figures: HTMLDivElement;
  problem: HTMLParagraphElement;
  actions: HTMLDivElement;
  /** The name and actions the buttons were made for: they are made again only when these change. */
  actionsKey: string;
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '';
  }
}
