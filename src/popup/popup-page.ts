import {
  callBackground,
  type Aria2Action,
  type JobAction,
  type JobView,
  type PortMessage,
  type RequestOf,
  type RequestType,
  type WatchedRow,
} from '../messages';
import { bareRequest, errorText, NOT_CONNECTED } from '../pages-shared/connection';
import { announce, h, setText } from '../pages-shared/dom';
import { formatRate } from '../words/format';
import { formatCount, plural, t, type MessageKey } from '../words/i18n';
import { addUrlForm } from './add-url-form';
import { Aria2List } from './aria2-list';
import { JobList, matchesFilter, type ListPhase } from './job-list';
import type { RowAction } from './job-row';
import { noticeText } from '../words/failure-text';
import { relinkMismatchText, stateLabel } from '../pages-shared/job-text';
import { announcement, applyPortMessage, EMPTY_MODEL, pageActions, summary, type PopupModel } from './jobs-model';
import type { LiveStatus } from '../pages-shared/reconnecting-port';
import { NoticeList } from './notice-list';
import { WatchedList } from './watched-list';
import { StreamList } from './stream-list';

export interface PopupDeps {
  /** `browser.runtime.sendMessage`; undefined outside the extension. */
  send?: (message: unknown) => Promise<unknown>;
  openOptions?: () => void;
  copyText?: (text: string) => Promise<void>;
  /** `browser.downloads.open`, called from the click itself: from the worker it lacks the user gesture. */
  openDownload?: (downloadId: number) => Promise<void>;
}

const JOB_ACTIONS: ReadonlySet<RowAction> = new Set(['start-now', 'pause', 'resume', 'cancel', 'retry', 'undo']);
/** "Could not pause file.iso: <why>": one message per action, so each language words it whole. */
const ACTION_FAILED: Record<RowAction, MessageKey> = {
  'start-now': 'failedStartNow',
  pause: 'failedPause',
  resume: 'failedResume',
  cancel: 'failedCancel',
  undo: 'failedUndo',
  'hand-back': 'failedHandBack',
  relink: 'failedRelink',
  retry: 'failedRetry',
  open: 'failedOpen',
  show: 'failedShow',
  'save-as': 'failedSaveAs',
  'copy-url': 'failedCopyUrl',
  'send-to-aria2': 'failedSendToAria2',
};

/** From this many downloads on, the popup offers a filter. */
const FILTER_FROM = 6;

/** The popup: header with page-wide actions, the add-URL form, notices and the job list. */
export class PopupPage {
  private model: PopupModel = EMPTY_MODEL;
  private phase: ListPhase = 'loading';
  private readonly live = h('div', { class: 'visually-hidden', 'aria-live': 'polite', role: 'status' });
  private readonly banner = h('p', { class: 'banner', role: 'status' });
  private readonly actionError = h('p', { class: 'error-text action-error', role: 'alert' });
  private readonly summary = h('span', { class: 'summary muted', 'data-testid': 'summary' });
  private readonly pauseAll = this.pageButton('pause-all', t('pauseAll'), () => void this.all('pause'));
  private readonly resumeAll = this.pageButton('resume-all', t('resumeAll'), () => void this.all('resume'));
  private readonly cancelAll = this.pageButton('cancel-all', t('cancelAll'), () => void this.all('cancel'));
  private readonly addToggle = h('button', {
    type: 'button',
    'data-testid': 'add-url-toggle',
    'aria-expanded': 'false',
    'aria-controls': 'add-url-form',
  });
  private readonly clearFinished = this.pageButton('clear-finished', t('clearFinished'), () => void this.clear());
  private readonly filter = h('input', {
    type: 'search',
    class: 'filter',
    placeholder: t('filterPlaceholder'),
    'aria-label': t('filterLabel'),
    'data-testid': 'job-filter',
  });
  private readonly bypassNext = this.pageButton('bypass-next', t('bypassNext'), () => void this.toggleBypass());
  private readonly notices = new NoticeList(
    () => void this.run('failedDismissNotices', bareRequest('dismiss-notices')).then((reply) => reply && this.dismissed()),
  );
  private readonly jobs = new JobList(
    (action, job, button) => void this.act(action, job, button),
    (job, url, startOver) => this.relink(job, url, startOver),
    {
      move: (job, direction) => void this.move(job, direction),
      setSpeedLimit: (job, bytesPerSecond) => void this.setSpeedLimit(job, bytesPerSecond),
      aria2Available: () => this.model.aria2.configured,
      savedPath: async (job) => (await this.call({ type: 'saved-path', id: job.id })).path,
    },
    () => this.addToggle.focus(),
  );
  private readonly aria2 = new Aria2List((gid, action, button) => void this.aria2Act(gid, action, button));
  private readonly watched = new WatchedList((row, button) => void this.takeOver(row, button));
  private readonly streams = new StreamList({
    // A download's job comes on the port; reading its segments' sizes takes a moment.
    download: (row, button, variant) =>
      void this.streamAction(
        button,
        { type: 'download-stream', url: row.url, ...(variant === undefined ? {} : { variant }) },
        'failedDownloadStream',
        row.title,
      ),
    record: (row, button) => void this.streamAction(button, { type: 'record-stream', url: row.url }, 'failedRecordStream', row.title),
    stop: (row, button) => void this.streamAction(button, { type: 'stop-recording', url: row.url }, 'failedRecordStream', row.title),
  });
  /** One Undo per Cancel all, above the list, while its downloads can come back. */
  private readonly undoBars = h('div', { class: 'undo-all' });
  /** Out of the way until wanted: the toolbar's Add URL… shows it. */
  private readonly addForm: HTMLFormElement;
  private actionErrorTimer: ReturnType<typeof setTimeout> | undefined;
  /** The settings' speed limit for all downloads (bytes/s), shown in the header; null: none. */
  private globalLimit: number | null = null;

  constructor(
    root: HTMLElement,
    private readonly deps: PopupDeps,
  ) {
    const settings = h(
      'button',
      { type: 'button', class: 'icon', title: t('settings'), 'aria-label': t('settings'), onclick: () => deps.openOptions?.() },
      '⚙',
    );
    settings.disabled = !deps.openOptions;
    this.banner.hidden = true;
    this.actionError.hidden = true;
    this.addToggle.textContent = t('addUrlToggle');
    this.addForm = addUrlForm(
      (url, saveAs) => this.addUrl(url, saveAs),
      (message) => announce(this.live, message),
    );
    this.addForm.id = 'add-url-form';
    this.addForm.hidden = true;
    this.addToggle.addEventListener('click', () => this.showAddForm(this.addForm.hidden !== false));
    this.addForm.addEventListener('keydown', (event) => {
      if (event.key !== 'Escape') return;
      event.preventDefault();
      this.showAddForm(false);
    });
    root.replaceChildren(
      h(
        'header',
        {},
        h('div', { class: 'title-row' }, h('h1', {}, t('extName')), this.summary, settings),
        h(
          'div',
          { class: 'toolbar', role: 'group', 'aria-label': t('allDownloads') },
          this.addToggle,
          this.pauseAll,
          this.resumeAll,
          this.cancelAll,
          this.clearFinished,
          this.bypassNext,
        ),
        this.filter,
      ),
      this.banner,
      this.addForm,
      this.actionError,
      this.notices.element,
      this.undoBars,
      this.jobs.element,
      this.watched.element,
      this.streams.element,
      this.aria2.element,
      this.live,
    );
    this.filter.addEventListener('input', () => {
      this.jobs.filter = this.filter.value;
      this.render();
    });
    this.bypassNext.setAttribute('aria-pressed', 'false');
    this.bypassNext.title = t('bypassNextTitle');
    if (deps.send) {
      this.render();
      void this.run('failedReadBypass', { type: 'bypass' }).then((reply) => reply && this.showBypass(reply.next));
      void this.readGlobalLimit();
    } else {
      this.setStatus('not-connected');
    }
  }

  /** One message from the UI port. */
  apply(message: PortMessage): void {
    const before = new Map(this.model.jobs.map((j) => [j.id, j]));
    const aria2Before = this.model.aria2.configured;
    this.model = applyPortMessage(this.model, message);
    if (this.model.aria2.configured !== aria2Before) this.jobs.refreshActions();
    if (message.type === 'snapshot') {
      // Connected again after the worker restarted: the settings may have changed meanwhile.
      if (this.phase !== 'loading') void this.readGlobalLimit();
      this.phase = 'ready';
    }
    if (message.type === 'job') {
      const said = announcement(before.get(message.job.id), message.job);
      if (said) announce(this.live, said);
    }
    if (message.type === 'notice') {
      announce(this.live, noticeText(message.notice.message));
      // A download left to the browser may have used up the bypass: show its state again.
      if (this.bypassNext.getAttribute('aria-pressed') === 'true')
        void this.run('failedReadBypass', { type: 'bypass' }).then((reply) => reply && this.showBypass(reply.next));
    }
    this.render();
  }

  setStatus(status: LiveStatus | 'not-connected'): void {
    const text = status === 'not-connected' ? NOT_CONNECTED : status === 'reconnecting' ? t('reconnecting') : '';
    setText(this.banner, text);
    this.banner.hidden = text === '';
    const enabled = status !== 'not-connected';
    if (!enabled) this.phase = 'offline';
    this.root()
      .querySelectorAll<HTMLButtonElement | HTMLInputElement>('.add-url input, .add-url button')
      .forEach((el) => {
        el.disabled = !enabled;
      });
    this.render();
  }

  private render(): void {
    const { jobs } = this.model;
    this.jobs.render(jobs, this.phase);
    this.notices.render(this.model.notices);
    this.watched.render(this.model.watched);
    this.streams.render(this.model.streams);
    this.aria2.render(this.model.aria2.rows, this.model.aria2.trouble);
    // The filter helps with many downloads; with a few it is only in the way.
    this.filter.hidden = jobs.length < FILTER_FROM && this.filter.value === '';
    this.renderUndoBars();
    // With a filter typed, the actions on all act on the rows shown.
    const can = pageActions(this.shownJobs());
    setUsable(this.pauseAll, can.pauseAll);
    setUsable(this.resumeAll, can.resumeAll);
    setUsable(this.cancelAll, can.cancelAll);
    setUsable(this.clearFinished, can.clearFinished);
    const { running, rate, stalled, queued } = summary(jobs);
    const parts = [
      running > 0 ? t('downloadingSummary', formatCount(running)) : '',
      running > 0 ? formatRate(rate) : '',
      // The one download under way receives nothing: the header says so, not its last numbers.
      stalled > 0 ? (stalled === 1 && running === 0 ? t('stateStalled') : t('stalledSummary', formatCount(stalled))) : '',
      queued > 0 ? t('queuedSummary', formatCount(queued)) : '',
      this.globalLimit !== null ? t('globalSpeedLimitSummary', formatRate(this.globalLimit)) : '',
    ];
    setText(this.summary, parts.filter(Boolean).join(' · '));
  }

  private showAddForm(shown: boolean): void {
    this.addForm.hidden = !shown;
    this.addToggle.setAttribute('aria-expanded', String(shown));
    (shown ? this.addForm.querySelector('input') : this.addToggle)?.focus();
  }

  private root(): HTMLElement {
    return this.live.parentElement ?? document.body;
  }

  /** Made unusable with aria-disabled, not `disabled`: a disabled button drops keyboard focus to the page body. */
  private pageButton(testId: string, label: string, onClick: () => void): HTMLButtonElement {
    const button = h('button', { type: 'button', 'data-testid': testId }, label);
    button.addEventListener('click', () => {
      if (button.getAttribute('aria-disabled') !== 'true') onClick();
    });
    return button;
  }

  private async act(action: RowAction, job: JobView, button: HTMLButtonElement): Promise<void> {
    // Not `disabled`: a disabled button drops keyboard focus to the page body.
    if (button.getAttribute('aria-disabled') === 'true') return;
    button.setAttribute('aria-disabled', 'true');
    try {
      // Before any await, so the browser still sees the user's click.
      const opening =
        action === 'open' && this.deps.openDownload && job.savedDownloadId !== undefined
          ? this.deps.openDownload(job.savedDownloadId)
          : undefined;
      if (opening) {
        await opening;
      } else if (action === 'hand-back') {
        await this.call({ type: 'hand-to-browser', id: job.id });
        announce(this.live, t('saidHandedBack', job.filename));
      } else if (action === 'send-to-aria2') {
        await this.call({ type: 'aria2-send', id: job.id });
        announce(this.live, t('noticeSentToAria2', job.filename));
      } else if (action === 'copy-url') {
        await (this.deps.copyText ?? ((text) => navigator.clipboard.writeText(text)))(job.url);
        announce(this.live, t('saidCopied'));
        showCopied(button);
        return;
      } else {
        const reply = JOB_ACTIONS.has(action)
          ? await this.call({ type: 'job-action', action: action as JobAction, id: job.id })
          : await this.call({ type: action === 'open' ? 'open-file' : action === 'show' ? 'show-in-folder' : 'save-as', id: job.id });
        // The reply's view is often ahead of the port; show it now.
        const updated = (reply as { job?: JobView }).job;
        if (updated) this.apply({ type: 'job', job: updated });
        if (action === 'cancel' && updated?.undoUntil !== undefined) {
          announce(
            this.live,
            t('saidUndoable', stateLabel(updated), job.filename, formatCount(Math.round((updated.undoUntil - Date.now()) / 1000))),
          );
        }
      }
      this.showActionError('');
    } catch (error) {
      this.showActionError(t(ACTION_FAILED[action], job.filename, errorText(error)));
    } finally {
      button.removeAttribute('aria-disabled');
    }
  }

  /** Resolves with why the stored bytes cannot be kept; throws the background's refusal in words. */
  private async relink(job: JobView, url: string, startOver: boolean): Promise<string | undefined> {
    try {
      const reply = await this.call({ type: 'relink', id: job.id, url, startOver });
      this.apply({ type: 'job', job: reply.job });
      if (!reply.mismatchFacts) announce(this.live, t('saidRelinked', job.filename));
      return reply.mismatchFacts && relinkMismatchText(reply.mismatchFacts);
    } catch (error) {
      throw new Error(errorText(error), { cause: error });
    }
  }

  private async all(action: 'pause' | 'resume' | 'cancel'): Promise<void> {
    const words = ALL_ACTION_WORDS[action];
    const ids = this.filter.value.trim() === '' ? undefined : this.shownJobs().map((job) => job.id);
    const reply = await this.run(words.failed, { type: 'all-action', action, ...(ids && { ids }) });
    if (reply) announce(this.live, plural(reply.affected, words.one, words.other));
  }

  /** The downloads the list shows: those the filter matches. */
  private shownJobs(): JobView[] {
    return this.model.jobs.filter((job) => matchesFilter(job, this.filter.value));
  }

  /**
   * One bar per Cancel all whose downloads can still come back: how many, and one Undo for them
   * all. Focus on an Undo that is gone (undone, or expired) goes back to Cancel all.
   */
  private renderUndoBars(): void {
    const groups = new Map<string, string[]>();
    for (const job of this.model.jobs) {
      if (job.undoGroup !== undefined && job.undoUntil !== undefined)
        groups.set(job.undoGroup, [...(groups.get(job.undoGroup) ?? []), job.id]);
    }
    const hadFocus = this.undoBars.contains(document.activeElement);
    for (const bar of [...this.undoBars.children] as HTMLElement[]) if (!groups.has(bar.dataset.group!)) bar.remove();
    for (const [group, ids] of groups) {
      let bar = [...this.undoBars.children].find((el) => (el as HTMLElement).dataset.group === group) as HTMLElement | undefined;
      if (!bar) {
        const button = h('button', { type: 'button', class: 'primary', 'data-testid': 'undo-all' }, t('actionUndo'));
        button.addEventListener('click', () => void this.undoAll(bar!, button));
        bar = h('p', { class: 'banner', 'data-testid': 'undo-all-bar', 'data-group': group }, h('span', {}), ' ', button);
        this.undoBars.append(bar);
      }
      bar.dataset.ids = ids.join(' ');
      setText(bar.firstElementChild as HTMLElement, plural(ids.length, 'cancelledAllOne', 'cancelledAllOther'));
    }
    if (hadFocus && !this.undoBars.contains(document.activeElement)) this.cancelAll.focus();
  }

  private async undoAll(bar: HTMLElement, button: HTMLButtonElement): Promise<void> {
    if (button.getAttribute('aria-disabled') === 'true') return;
    button.setAttribute('aria-disabled', 'true');
    const ids = (bar.dataset.ids ?? '').split(' ').filter(Boolean);
    const reply = await this.run('failedUndoAll', { type: 'all-action', action: 'undo', ids });
    button.removeAttribute('aria-disabled');
    if (reply) announce(this.live, plural(reply.affected, 'saidUndoneAllOne', 'saidUndoneAllOther'));
  }

  private async move(job: JobView, direction: 'up' | 'down'): Promise<void> {
    const reply = await this.run('failedMove', { type: 'queue-move', id: job.id, direction }, job.filename);
    if (!reply) return;
    this.apply({ type: 'job', job: reply.job });
    const place = reply.job.queuePlace;
    if (place) announce(this.live, t('saidQueuePlace', job.filename, formatCount(place.position), formatCount(place.of)));
  }

  private async setSpeedLimit(job: JobView, bytesPerSecond: number | null): Promise<void> {
    const reply = await this.run('failedSpeedLimit', { type: 'job-speed-limit', id: job.id, bytesPerSecond }, job.filename);
    if (!reply) return;
    this.apply({ type: 'job', job: reply.job });
    announce(
      this.live,
      bytesPerSecond === null ? t('saidNoSpeedLimit', job.filename) : t('saidSpeedLimit', job.filename, formatRate(bytesPerSecond)),
    );
  }

  /** The header says when the settings limit every download's speed; not knowing it is no error worth showing. */
  private async readGlobalLimit(): Promise<void> {
    const reply = await this.call({ type: 'get-settings' }).catch(() => undefined);
    const limit = reply?.settings?.speedLimitBytesPerSec ?? null;
    if (limit === this.globalLimit) return;
    this.globalLimit = limit;
    this.render();
  }

  private async toggleBypass(): Promise<void> {
    const next = this.bypassNext.getAttribute('aria-pressed') !== 'true';
    const reply = await this.run('failedBypass', { type: 'bypass', next });
    if (!reply) return;
    this.showBypass(reply.next);
    announce(this.live, reply.next ? t('saidBypassOn') : t('saidBypassOff'));
  }

  private showBypass(armed: boolean): void {
    this.bypassNext.setAttribute('aria-pressed', String(armed));
  }

  private async clear(): Promise<void> {
    const reply = await this.run('failedClearFinished', bareRequest('clear-finished'));
    if (reply) announce(this.live, plural(reply.removed, 'saidClearedOne', 'saidClearedOther'));
  }

  private dismissed(): void {
    this.model = { ...this.model, notices: [] };
    this.render();
  }

  private async addUrl(url: string, saveAs: boolean): Promise<string> {
    try {
      const { job } = await this.call({ type: 'add-url', url, saveAs });
      this.apply({ type: 'job', job });
      return t('saidAdded', job.filename);
    } catch (error) {
      throw new Error(errorText(error), { cause: error });
    }
  }

  /** An action on a download in aria2; the rows follow from the port. */
  private async aria2Act(gid: string, action: Aria2Action, button: HTMLButtonElement): Promise<void> {
    if (button.getAttribute('aria-disabled') === 'true') return;
    button.setAttribute('aria-disabled', 'true');
    try {
      await this.call({ type: 'aria2-action', gid, action });
      this.showActionError('');
    } catch (error) {
      this.showActionError(errorText(error));
    } finally {
      button.removeAttribute('aria-disabled');
    }
  }

  /**
   * Take over of a download left with the browser: its row leaves the list and Stitch's job comes
   * (both follow from the port); the notice says it was taken.
   */
  private async takeOver(row: WatchedRow, button: HTMLButtonElement): Promise<void> {
    if (button.getAttribute('aria-disabled') === 'true') return;
    button.setAttribute('aria-disabled', 'true');
    try {
      const { taken } = await this.call({ type: 'take-over-watched', downloadId: row.downloadId });
      this.showActionError(taken ? '' : t('failedTakeOver', row.name, t('takeOverLeft')));
    } catch (error) {
      this.showActionError(t('failedTakeOver', row.name, errorText(error)));
    } finally {
      button.removeAttribute('aria-disabled');
    }
  }

  /** Download, Record or Stop on a found stream's row: what follows comes on the port; a failure is said under the list. */
  private async streamAction(
    button: HTMLButtonElement,
    request: RequestOf<'download-stream' | 'record-stream' | 'stop-recording'>,
    failed: MessageKey,
    title: string,
  ): Promise<void> {
    if (button.getAttribute('aria-disabled') === 'true') return;
    button.setAttribute('aria-disabled', 'true');
    try {
      await this.call(request);
      this.showActionError('');
    } catch (error) {
      this.showActionError(t(failed, title, errorText(error)));
    } finally {
      button.removeAttribute('aria-disabled');
    }
  }

  /**
   * A request whose failure is shown (`failed` says what could not be done, of the download
   * named `subject` if it is about one), not thrown.
   */
  private async run<T extends RequestType>(failed: MessageKey, request: RequestOf<T>, subject?: string) {
    try {
      const reply = await this.call(request);
      this.showActionError('');
      return reply;
    } catch (error) {
      this.showActionError(subject === undefined ? t(failed, errorText(error)) : t(failed, subject, errorText(error)));
      return undefined;
    }
  }

  private call<T extends RequestType>(request: RequestOf<T>) {
    if (!this.deps.send) return Promise.reject(new Error(NOT_CONNECTED));
    return callBackground(this.deps.send, request);
  }

  private showActionError(message: string): void {
    setText(this.actionError, message);
    this.actionError.hidden = message === '';
    clearTimeout(this.actionErrorTimer);
    if (message) this.actionErrorTimer = setTimeout(() => this.showActionError(''), 10_000);
  }
}

/** The words of Pause all, Resume all and Cancel all: what failed, and what was done (one, several). */
const ALL_ACTION_WORDS = {
  pause: { failed: 'failedPauseAll', one: 'saidPausedOne', other: 'saidPausedOther' },
  resume: { failed: 'failedResumeAll', one: 'saidResumedOne', other: 'saidResumedOther' },
  cancel: { failed: 'failedCancelAll', one: 'saidCancelledOne', other: 'saidCancelledOther' },
} as const satisfies Record<string, Record<string, MessageKey>>;

function setUsable(button: HTMLButtonElement, usable: boolean): void {
  button.setAttribute('aria-disabled', String(!usable));
}

/** A visible "Copied" on the button for a moment: the announcement alone is only heard. */
function showCopied(button: HTMLButtonElement): void {
  const label = button.textContent;
  const copied = t('actionCopied');
  button.textContent = copied;
  setTimeout(() => {
    if (button.textContent === copied) button.textContent = label;
  }, 2000);
}
