import type { JobView } from '../../messages';
import { failureText } from '../../words/failure-text';
import { t } from '../../words/i18n';
import type { BrowserApi } from '../browser-api';

/** What the user asked to be told about, from the settings. */
export interface NotifyChoices {
  notifyFailed: boolean;
  notifyCompleted: boolean;
}

/** Downloads that are moving: their number is the toolbar badge. */
function isActive(job: JobView): boolean {
  return job.undoUntil === undefined && (job.state === 'running' || job.state === 'verifying' || job.state === 'saving');
}

/**
 * The toolbar button and the system notifications: the badge shows how many downloads are
 * active; a job that fails (or, when asked, is saved) is told with a notification, once per
 * change of state, so a person who closed the popup still learns of it.
 */
export class Toolbar {
  private readonly states = new Map<string, JobView['state']>();
  private readonly active = new Set<string>();
  private shown = '';

  constructor(
    private readonly api: BrowserApi,
    private readonly choices: () => NotifyChoices,
  ) {
    void api.action?.setBadgeBackgroundColor('#1f6feb').catch(() => {});
  }

  /** A job's new view (the manager's onView). */
  jobChanged(job: JobView): void {
    const before = this.states.get(job.id);
    this.states.set(job.id, job.state);
    if (isActive(job)) this.active.add(job.id);
    else this.active.delete(job.id);
    this.updateBadge();
    // `before` unknown: a job seen first after a restart says nothing it may have said already.
    if (before === undefined || before === job.state) return;
    const { notifyFailed, notifyCompleted } = this.choices();
    if (job.state === 'failed' && notifyFailed) {
      this.notify(job.id, t('notifyFailedTitle', job.filename), t('notifyFailedBody', failureText(job.failure)));
    }
    if (job.state === 'saved' && notifyCompleted) this.notify(job.id, t('notifySavedTitle', job.filename), t('notifySavedBody'));
  }

  jobRemoved(id: string): void {
    this.states.delete(id);
    this.active.delete(id);
    this.updateBadge();
  }

  /** A short notice that Stitch took a browser download over (where to see it, how to undo). */
  tookOver(filename: string, id: string): void {
    this.notify(`takeover:${id}`, t('notifyTookOverTitle', filename), t('notifyTookOverBody'));
  }

  private notify(id: string, title: string, message: string): void {
    void this.api.notifications?.create(id, { title, message }).catch(() => {});
  }

  private updateBadge(): void {
    const text = this.active.size === 0 ? '' : String(this.active.size);
    if (text === this.shown) return;
    this.shown = text;
    void this.api.action?.setBadgeText(text).catch(() => {});
  }
}
