import type { JobView } from '../messages';
import { h } from '../pages-shared/dom';
import { t } from '../words/i18n';
import { JobRow, type ActionHandler, type Relinker, type RowControls } from './job-row';
import { stateLabel } from '../pages-shared/job-text';

export type ListPhase = 'loading' | 'ready' | 'offline';

/** Whether a job matches the filter text: its name, host or state (as shown, or the machine value), case-insensitively. */
export function matchesFilter(job: JobView, filter: string): boolean {
  const words = filter.trim().toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return true;
  const text = `${job.filename} ${job.url} ${job.state} ${stateLabel(job)}`.toLowerCase();
  return words.every((word) => text.includes(word));
}

/** The list of rows, reconciled by job id so rows (and focus in them) persist across updates. */
export class JobList {
  readonly list = h('ul', { class: 'job-list', 'data-testid': 'job-list', 'aria-label': t('downloadsList') });
  private readonly empty = h(
    'div',
    { class: 'empty-state', 'data-testid': 'empty' },
    h('p', {}, h('strong', {}, t('emptyTitle'))),
    h('p', { class: 'muted' }, t('emptyHint')),
  );
  private readonly loading = h('p', { class: 'empty-state muted' }, t('loading'));
  private readonly noMatch = h('p', { class: 'empty-state muted', 'data-testid': 'no-match' }, t('noMatch'));
  /** Text typed in the popup's filter; rows that do not match are hidden (not removed: focus stays). */
  filter = '';
  readonly element = h('main', { class: 'jobs' }, this.list, this.loading);
  private readonly rows = new Map<string, { row: JobRow; job: JobView }>();

  constructor(
    private readonly onAction: ActionHandler,
    private readonly relink?: Relinker,
    private readonly controls?: RowControls,
    /** Where focus goes when the last row goes with it (an Undo expired). */
    private readonly focusWhenEmpty?: () => void,
  ) {}

  /** The actions a row offers changed without its job changing (an aria2 endpoint was set or removed). */
  refreshActions(): void {
    for (const { row, job } of this.rows.values()) row.update(job);
  }

  /**
   * `phase` is 'loading' until the first snapshot, so "no downloads" is never said too early;
   * 'offline' when there is no background to ask (the page's banner says so).
   */
  render(jobs: readonly JobView[], phase: ListPhase): void {
    // Moving or removing a row drops the focus in it to the page: it is put back below.
    const focused = document.activeElement;
    const focusedRow = [...this.list.children].findIndex((li) => li.contains(focused));
    const ids = new Set(jobs.map((j) => j.id));
    for (const [id, { row }] of this.rows) {
      if (ids.has(id)) continue;
      row.element.remove();
      this.rows.delete(id);
    }
    const changed: [JobRow, JobView][] = [];
    jobs.forEach((job, i) => {
      let entry = this.rows.get(job.id);
      if (!entry) {
        entry = { row: new JobRow(job, this.onAction, undefined, undefined, this.relink, this.controls), job };
        this.rows.set(job.id, entry);
      } else if (entry.job !== job) {
        changed.push([entry.row, job]);
        entry.job = job;
      }
      const at = this.list.children[i];
      if (at !== entry.row.element) this.list.insertBefore(entry.row.element, at ?? null);
    });
    // Back where it was before the rows update: a row moves focus on from a button it replaces.
    if (focused instanceof HTMLElement && focused.isConnected && document.activeElement !== focused) focused.focus();
    for (const [row, job] of changed) row.update(job);
    this.loading.remove();
    this.empty.remove();
    this.noMatch.remove();
    let shown = 0;
    for (const job of jobs) {
      const visible = matchesFilter(job, this.filter);
      this.rows.get(job.id)!.row.element.hidden = !visible;
      if (visible) shown++;
    }
    if (focusedRow >= 0) this.keepFocus(focusedRow);
    if (jobs.length > 0 && shown === 0) this.element.append(this.noMatch);
    if (jobs.length > 0) return;
    if (phase === 'loading') this.element.append(this.loading);
    if (phase === 'ready') this.element.append(this.empty);
  }

  /** Focus that was in a row that is gone goes to the row now in its place (or, with none left, elsewhere). */
  private keepFocus(row: number): void {
    if (this.list.contains(document.activeElement)) return;
    const rows = [...this.list.children].filter((li) => !(li as HTMLElement).hidden);
    const next = rows[Math.min(row, rows.length - 1)];
    const entry = next && this.rows.get((next as HTMLElement).dataset.jobId ?? '');
    if (entry) entry.row.focus();
    else this.focusWhenEmpty?.();
  }
}
