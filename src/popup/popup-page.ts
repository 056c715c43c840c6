import { callBackground, type JobAction, type JobView, type PortMessage, type RequestOf, type RequestType } from '../messages';
import { bareRequest, errorText, NOT_CONNECTED } from '../pages-shared/connection';
import { announce, h, setText } from '../pages-shared/dom';
import { formatRate } from '../pages-shared/format';
import { addUrlForm } from './add-url-form';
import { JobList, type ListPhase } from './job-list';
import type { RowAction } from './job-row';
import { announcement, applyPortMessage, EMPTY_MODEL, pageActions, summary, type PopupModel } from './jobs-model';
import type { LiveStatus } from './live-port';
import { NoticeList } from './notice-list';

export interface PopupDeps {
  /** `browser.runtime.sendMessage`; undefined outside the extension. */
  send?: (message: unknown) => Promise<unknown>;
  openOptions?: () => void;
  copyText?: (text: string) => Promise<void>;
}

const JOB_ACTIONS: ReadonlySet<RowAction> = new Set(['pause', 'resume', 'cancel', 'retry']);
const ACTION_FAILED: Record<RowAction, string> = {
  pause: 'pause',
  resume: 'resume',
  cancel: 'cancel',
  retry: 'retry',
  open: 'open',
  show: 'show in its folder',
  'save-as': 'save',
  'copy-url': 'copy the URL of',
};

/** The popup: header with page-wide actions, the add-URL form, notices and the job list. */
export class PopupPage {
  private model: PopupModel = EMPTY_MODEL;
  private phase: ListPhase = 'loading';
  private readonly live = h('div', { class: 'visually-hidden', 'aria-live': 'polite', role: 'status' });
  private readonly banner = h('p', { class: 'banner', role: 'status' });
  private readonly actionError = h('p', { class: 'error-text action-error', role: 'alert' });
  private readonly summary = h('span', { class: 'summary muted' });
  private readonly pauseAll = this.pageButton('pause-all', 'Pause all', () => void this.all('pause'));
  private readonly resumeAll = this.pageButton('resume-all', 'Resume all', () => void this.all('resume'));
  private readonly clearFinished = this.pageButton('clear-finished', 'Clear finished', () => void this.clear());
  private readonly notices = new NoticeList(() => void this.run('dismiss notices', bareRequest('dismiss-notices')).then((reply) => reply && this.dismissed()));
  private readonly jobs = new JobList((action, job, button) => void this.act(action, job, button));
  private actionErrorTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    root: HTMLElement,
    private readonly deps: PopupDeps,
  ) {
    const settings = h(
      'button',
      { type: 'button', class: 'icon', title: 'Settings', 'aria-label': 'Settings', onclick: () => deps.openOptions?.() },
      '⚙',
    );
    settings.disabled = !deps.openOptions;
    this.banner.hidden = true;
    this.actionError.hidden = true;
    root.replaceChildren(
      h(
        'header',
        {},
        h('div', { class: 'title-row' }, h('h1', {}, 'Stitch'), this.summary, settings),
        h('div', { class: 'toolbar', role: 'group', 'aria-label': 'All downloads' }, this.pauseAll, this.resumeAll, this.clearFinished),
      ),
      this.banner,
      addUrlForm((url, saveAs) => this.addUrl(url, saveAs), (message) => announce(this.live, message)),
      this.actionError,
      this.notices.element,
      this.jobs.element,
      this.live,
    );
    if (deps.send) this.render();
    else this.setStatus('not-connected');
  }

  /** One message from the UI port. */
  apply(message: PortMessage): void {
    const before = new Map(this.model.jobs.map((j) => [j.id, j]));
    this.model = applyPortMessage(this.model, message);
    if (message.type === 'snapshot') this.phase = 'ready';
    if (message.type === 'job') {
      const said = announcement(before.get(message.job.id), message.job);
      if (said) announce(this.live, said);
    }
    if (message.type === 'notice') announce(this.live, message.notice.message);
    this.render();
  }

  setStatus(status: LiveStatus | 'not-connected'): void {
    const text =
      status === 'not-connected' ? NOT_CONNECTED : status === 'reconnecting' ? 'Reconnecting to Stitch…' : '';
    setText(this.banner, text);
    this.banner.hidden = text === '';
    const enabled = status !== 'not-connected';
    if (!enabled) this.phase = 'offline';
    this.root().querySelectorAll<HTMLButtonElement | HTMLInputElement>('.add-url input, .add-url button').forEach((el) => {
      el.disabled = !enabled;
    });
    this.render();
  }

  private render(): void {
    const { jobs } = this.model;
    this.jobs.render(jobs, this.phase);
    this.notices.render(this.model.notices);
    const can = pageActions(jobs);
    this.pauseAll.disabled = !can.pauseAll;
    this.resumeAll.disabled = !can.resumeAll;
    this.clearFinished.disabled = !can.clearFinished;
    const { running, rate } = summary(jobs);
    setText(this.summary, running === 0 ? '' : `${running} downloading${rate > 0 ? ` · ${formatRate(rate)}` : ''}`);
  }

  private root(): HTMLElement {
    return this.live.parentElement ?? document.body;
  }

  private pageButton(testId: string, label: string, onClick: () => void): HTMLButtonElement {
    return h('button', { type: 'button', 'data-testid': testId, onclick: onClick }, label);
  }

  private async act(action: RowAction, job: JobView, button: HTMLButtonElement): Promise<void> {
    button.disabled = true;
    try {
      if (action === 'copy-url') {
        await (this.deps.copyText ?? ((text) => navigator.clipboard.writeText(text)))(job.url);
        announce(this.live, 'URL copied.');
        return;
      }
      const reply = JOB_ACTIONS.has(action)
        ? await this.call({ type: 'job-action', action: action as JobAction, id: job.id })
        : await this.call({ type: action === 'open' ? 'open-file' : action === 'show' ? 'show-in-folder' : 'save-as', id: job.id });
      // The reply's view is often ahead of the port; show it now.
      const updated = (reply as { job?: JobView }).job;
      if (updated) this.apply({ type: 'job', job: updated });
      this.showActionError('');
    } catch (error) {
      this.showActionError(`Could not ${ACTION_FAILED[action]} ${job.filename}: ${errorText(error)}`);
    } finally {
      button.disabled = false;
    }
  }

  private async all(action: 'pause' | 'resume'): Promise<void> {
    const reply = await this.run(`${action} all`, { type: 'all-action', action });
    if (reply) announce(this.live, `${action === 'pause' ? 'Paused' : 'Resumed'} ${plural(reply.affected, 'download')}.`);
  }

  private async clear(): Promise<void> {
    const reply = await this.run('clear finished downloads', bareRequest('clear-finished'));
    if (reply) announce(this.live, `Cleared ${plural(reply.removed, 'finished download')}.`);
  }

  private dismissed(): void {
    this.model = { ...this.model, notices: [] };
    this.render();
  }

  private async addUrl(url: string, saveAs: boolean): Promise<string> {
    try {
      const { job } = await this.call({ type: 'add-url', url, saveAs });
      this.apply({ type: 'job', job });
      return `Added ${job.filename}.`;
    } catch (error) {
      throw new Error(errorText(error), { cause: error });
    }
  }

  /** A page-wide request; failures are shown, not thrown. */
  private async run<T extends RequestType>(what: string, request: RequestOf<T>) {
    try {
      const reply = await this.call(request);
      this.showActionError('');
      return reply;
    } catch (error) {
      this.showActionError(`Could not ${what}: ${errorText(error)}`);
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

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}
