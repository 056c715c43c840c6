import type { JobView } from '../messages';
import { h, setText } from '../pages-shared/dom';
import { mediaTypeOf, playerPath } from '../media-type';
import { formatRate } from '../words/format';
import { UNIT_BOUNDS } from '../settings/schema';
import { parseSpeedLimit, speedLimitField } from './speed-limit';
import {
  etaText,
  hostText,
  jobName,
  limitText,
  originText,
  rateText,
  retryText,
  sizeText,
  stateClass,
  stateLabel,
} from '../pages-shared/job-text';
import { MirrorBar } from './mirror-bar';
import { FileDrag, type SavedPathLookup } from './file-drag';
import { failureText, noticeText } from '../words/failure-text';
import { formatCount, numberFormat, plural, sentence, t } from '../words/i18n';

/** Everything a row can offer; each maps to a button with data-testid `job-<action>`. */
export type RowAction =
  | 'start-now'
  | 'pause'
  | 'resume'
  | 'retry'
  | 'open'
  | 'show'
  | 'save-as'
  | 'copy-url'
  | 'cancel'
  | 'undo'
  | 'hand-back'
  | 'relink'
  | 'send-to-aria2';

/** Move up and Move down, as far as the job's place in the queue allows. */
export function queueMoves(job: JobView): ('up' | 'down')[] {
  const place = job.undoUntil === undefined ? job.queuePlace : undefined;
  if (!place) return [];
  return [...(place.position > 1 ? (['up'] as const) : []), ...(place.position < place.of ? (['down'] as const) : [])];
}

/** A queued job's place as the language counts places ("3rd", "3.", "第 3 位"); empty for any other job. */
export function queuePlaceText(job: JobView): string {
  const position = job.undoUntil === undefined && job.state === 'queued' ? job.queuePlace?.position : undefined;
  if (position === undefined) return '';
  const place = formatCount(position);
  // The language of the words shown (the browser may lack its own), not the browser's.
  switch (new Intl.PluralRules(t('languageTag'), { type: 'ordinal' }).select(position)) {
    case 'one':
      return t('queuePlaceOne', place);
    case 'two':
      return t('queuePlaceTwo', place);
    case 'few':
      return t('queuePlaceFew', place);
    default:
      return t('queuePlaceOther', place);
  }
}

/** Gives the job a new URL; resolves with why the stored bytes cannot be kept, if so. */
export type Relinker = (job: JobView, url: string, startOver: boolean) => Promise<string | undefined>;

/** How many of a job's notices a row shows (the newest). */
const NOTICES_SHOWN = 3;

/** The actions that apply to a job in its state, in the order the row shows them; `aria2`: an aria2 endpoint is set. */
export function rowActions(job: JobView, aria2 = false): RowAction[] {
  // One Cancel all is undone by its one Undo above the list, not row by row.
  if (job.undoUntil !== undefined) return job.undoGroup === undefined ? ['undo'] : [];
  const actions: RowAction[] = [];
  switch (job.state) {
    case 'queued':
      // Waiting behind the concurrent-downloads limit: the user may want this one first.
      actions.push('start-now', 'pause');
      break;
    case 'running':
      actions.push('pause');
      break;
    case 'paused':
      actions.push('resume');
      break;
    case 'failed':
      actions.push('retry');
      break;
  }
  if (job.state === 'saved' && job.savedDownloadId !== undefined) actions.push('open', 'show');
  // A complete file that failed to save is still stored: the user may pick another place.
  if (job.state === 'failed' && savedNot(job)) actions.push('save-as');
  // An expired link: a new address continues with the stored bytes (or starts over). A stream's
  // address is its playlist, which names every segment: it cannot change under a download.
  if (!job.stream && (job.state === 'paused' || (job.state === 'failed' && !savedNot(job)))) actions.push('relink');
  // Taken over but wanted in the browser after all: hand it back while it is not complete.
  if (job.takenOver && ['queued', 'running', 'paused'].includes(job.state)) actions.push('hand-back');
  // Not yet saved: aria2 may take it over (on a home server, or to go on after the browser closes).
  // A stream's URL is a playlist: aria2 would save the playlist, not the video.
  if (aria2 && !job.stream && (['queued', 'running', 'paused'].includes(job.state) || (job.state === 'failed' && !savedNot(job))))
    actions.push('send-to-aria2');
  actions.push('copy-url');
  // A saved row is removed from the list alone (the file on disk stays).
  if (job.state !== 'saving' && job.state !== 'cancelled') actions.push('cancel');
  return actions;
}

/** A complete file the browser could not save (for want of room or otherwise): it is still stored. */
function savedNot(job: JobView): boolean {
  return job.errorCode?.startsWith('save-') === true;
}

function actionLabel(action: RowAction, job: JobView): string {
  switch (action) {
    case 'pause':
      return t('actionPause');
    case 'resume':
      return t('actionResume');
    case 'retry':
      return t('actionRetry');
    case 'open':
      return t('actionOpen');
    case 'show':
      return t('actionShow');
    case 'save-as':
      return t('actionSaveAs');
    case 'copy-url':
      return t('actionCopyUrl');
    case 'cancel':
      // A failed or saved job is not running: it is removed from the list (with its stored bytes).
      return job.state === 'failed' || job.state === 'saved' ? t('actionRemove') : t('actionCancel');
    case 'undo':
      return t('actionUndo');
    case 'hand-back':
      return t('actionHandBack');
    case 'relink':
      return t('actionRelink');
    case 'start-now':
      return t('actionStartNow');
    case 'send-to-aria2':
      return t('actionSendToAria2');
  }
}

export type ActionHandler = (action: RowAction, job: JobView, button: HTMLButtonElement) => void;

/** The browser's answer to "can you play this type?" ('' for no). */
export type CanPlayType = (type: string) => string;

const browserCanPlayType: CanPlayType = (type) => document.createElement('video').canPlayType(type);

/** "Play" is offered for audio or video whose bytes are stored, of a type this browser plays. */
export function canPlayHere(job: JobView, canPlayType: CanPlayType = browserCanPlayType): boolean {
  const type = job.canPlay ? mediaTypeOf(job.contentType, job.filename) : undefined;
  return type !== undefined && canPlayType(type) !== '';
}

/**
 * Opens the player for the job in a new tab through the extension's tabs API (a page opened
 * with window.open from the popup did not always get the extension APIs in Chromium).
 */
function openPlayerTab(job: JobView): void {
  const url = playerPath({ id: job.id });
  const tabs = (globalThis as { chrome?: { tabs?: { create(properties: { url: string }): unknown } } }).chrome?.tabs;
  if (tabs) void tabs.create({ url });
  else window.open(url, '_blank');
}

/** The actions a row offers on its first line; the others are in its details. */
const PRIMARY: ReadonlySet<RowAction> = new Set(['start-now', 'pause', 'resume', 'retry', 'open', 'undo']);

/** The row's own controls that are not background actions: queue order, speed limit, dragging the saved file out. */
export interface RowControls {
  move(job: JobView, direction: 'up' | 'down'): void;
  /** Bytes/s, or null for none. */
  setSpeedLimit(job: JobView, bytesPerSecond: number | null): void;
  /** Whether downloads can be sent to aria2 (an endpoint is set). */
  aria2Available(): boolean;
  savedPath: SavedPathLookup;
}

/**
 * One job in the list. Built once and updated in place on every progress message, so focus,
 * hover tooltips and text selection survive the ~4 updates a second. Collapsed it is a line of
 * name, state and the one action that fits the state, and a line of host and figures; the
 * name's disclosure shows the rest (every action, mirrors, notices, the URL, queue order, speed limit).
 */
export class JobRow {
  readonly element: HTMLLIElement;
  private job: JobView;
  // Names, hosts and URLs take their direction from their own text: in a right-to-left page
  // "movie (2019).mkv" would otherwise show its brackets at the wrong end.
  private readonly filename = h('span', { class: 'filename', 'data-testid': 'job-filename', dir: 'auto' });
  private readonly toggle = h('button', {
    type: 'button',
    class: 'job-toggle',
    'data-testid': 'job-details-toggle',
    'aria-expanded': 'false',
  });
  private readonly state = h('span', { class: 'state', 'data-testid': 'job-state' });
  /** Beside "Queued": which place ("3rd"). */
  private readonly place = h('span', { class: 'queue-place muted', 'data-testid': 'job-queue-place' });
  private readonly primary = h('span', { class: 'primary-action' });
  private readonly host = h('span', { class: 'job-host', 'data-testid': 'job-host', dir: 'auto' });
  /** Host and date; pressed, it shows the whole URL (a tooltip alone is out of a keyboard's reach). */
  private readonly origin = h('button', {
    type: 'button',
    class: 'job-origin link muted',
    'data-testid': 'job-origin',
    'aria-expanded': 'false',
  });
  private readonly fullUrl = h('p', { class: 'job-url', 'data-testid': 'job-url', dir: 'auto' });
  private readonly retry = h('p', { class: 'job-retry', 'data-testid': 'job-retrying' });
  private readonly progress = h('progress', { 'data-testid': 'job-progress' });
  private readonly size = h('span', { 'data-testid': 'job-size' });
  private readonly rate = h('span', { class: 'rate', 'data-testid': 'job-rate' });
  private readonly eta = h('span', { class: 'eta', 'data-testid': 'job-eta' });
  /** On the collapsed row: the download's own speed limit, when it has one. */
  private readonly limit = h('span', { class: 'job-limit', 'data-testid': 'job-limit' });
  private readonly error = h('p', { class: 'error-text job-error', 'data-testid': 'job-error' });
  private readonly notices = h('ul', { class: 'job-notices', 'data-testid': 'job-notices', 'aria-label': t('noticesLabel') });
  private readonly mirrors: MirrorBar;
  private readonly speedLimit: HTMLInputElement;
  private readonly speedLimitField: HTMLDivElement;
  /** Lifts the download's own limit (as an empty field does). */
  private readonly speedLimitClear = h('button', { type: 'button', 'data-testid': 'job-speed-limit-clear' }, t('noLimit'));
  /** Why what was typed is refused, and that the limit stays; beside the field. */
  private readonly speedLimitError = h('p', { class: 'error-text', role: 'alert', 'data-testid': 'job-speed-limit-error' });
  private readonly actions = h('div', { class: 'actions' });
  private readonly details: HTMLDivElement;
  private readonly fileDrag: FileDrag;
  private actionsKey = '';

  constructor(
    job: JobView,
    private readonly onAction: ActionHandler,
    private readonly canPlayType: CanPlayType = browserCanPlayType,
    private readonly openPlayer: (job: JobView) => void = openPlayerTab,
    private readonly relink?: Relinker,
    private readonly controls?: RowControls,
  ) {
    this.job = job;
    this.mirrors = new MirrorBar(job.mirrors);
    const filenameId = `job-${job.id}-name`;
    const detailsId = `job-${job.id}-details`;
    this.filename.id = filenameId;
    this.progress.setAttribute('aria-labelledby', filenameId);
    this.toggle.setAttribute('aria-controls', detailsId);
    this.toggle.append(this.filename);
    // Text, not a number field: a number field reads letters as empty, which would lift the limit.
    this.speedLimit = h('input', {
      type: 'text',
      inputmode: 'decimal',
      autocomplete: 'off',
      placeholder: t('noLimit'),
      'data-testid': 'job-speed-limit',
    });
    const errorId = `job-${job.id}-speed-limit-error`;
    this.speedLimitError.id = errorId;
    this.speedLimitError.hidden = true;
    this.speedLimit.setAttribute('aria-describedby', errorId);
    this.speedLimitField = h(
      'div',
      { class: 'job-speed-limit-field' },
      h('label', { class: 'job-speed-limit' }, t('jobSpeedLimit'), this.speedLimit),
      this.speedLimitClear,
      this.speedLimitError,
    );
    this.details = h(
      'div',
      { class: 'job-details', id: detailsId },
      this.origin,
      this.fullUrl,
      this.mirrors.element,
      this.speedLimitField,
      this.actions,
    );
    this.element = h(
      'li',
      { class: 'job', 'data-testid': 'job-row', 'data-job-id': job.id, 'aria-labelledby': filenameId },
      h('div', { class: 'job-head' }, this.toggle, this.state, this.place, this.primary),
      h('div', { class: 'job-figures' }, this.host, this.size, h('span', { class: 'speed' }, this.limit, this.rate, this.eta)),
      this.progress,
      this.details,
    );
    this.fileDrag = new FileDrag(this.element, this.controls?.savedPath);
    this.details.hidden = true;
    this.fullUrl.hidden = true;
    this.toggle.addEventListener('click', () => {
      this.details.hidden = !this.details.hidden;
      this.toggle.setAttribute('aria-expanded', String(!this.details.hidden));
    });
    this.origin.addEventListener('click', () => {
      this.fullUrl.hidden = !this.fullUrl.hidden;
      this.origin.setAttribute('aria-expanded', String(!this.fullUrl.hidden));
    });
    // `change` comes with Enter or on leaving the field: not on every digit typed. What cannot be
    // a limit (0, −5, letters, more than the settings allow) is refused, and the old limit stays.
    this.speedLimit.addEventListener('change', () => {
      const input = parseSpeedLimit(this.speedLimit.value, decimalPoint());
      if (input.kind === 'refused') return this.refuseSpeedLimit();
      this.showSpeedLimitError('');
      this.controls?.setSpeedLimit(this.job, input.kind === 'limit' ? input.bytesPerSecond : null);
    });
    this.speedLimitClear.addEventListener('click', () => {
      this.speedLimit.value = '';
      this.showSpeedLimitError('');
      this.controls?.setSpeedLimit(this.job, null);
      this.speedLimit.focus();
    });
    this.update(job);
  }

  get id(): string {
    return this.job.id;
  }

  /** The row's first control: where focus goes when the row is what a person was on. */
  focus(): void {
    this.toggle.focus();
  }

  update(job: JobView): void {
    this.job = job;
    this.element.dataset.state = job.state;
    this.element.toggleAttribute('data-retrying', job.retrying !== undefined);
    setText(this.filename, job.filename);
    this.toggle.title = `${job.filename}\n${job.url}`;
    this.toggle.setAttribute('aria-label', jobName(job));
    setText(this.host, hostText(job));
    setText(this.origin, originText(job));
    this.origin.title = job.url;
    setText(this.fullUrl, job.url);
    setText(this.state, stateLabel(job));
    this.state.className = stateClass(job);
    setText(this.place, queuePlaceText(job));
    this.place.hidden = this.place.textContent === '';
    this.element.toggleAttribute('data-undo', job.undoUntil !== undefined);
    this.updateRetry(job);
    this.updateProgress(job);
    setText(this.size, sizeText(job));
    setText(this.rate, rateText(job));
    setText(this.eta, etaText(job));
    setText(this.limit, limitText(job));
    this.limit.hidden = this.limit.textContent === '';
    this.updateError(job);
    this.updateNotices(job);
    this.mirrors.update(job.mirrors);
    this.updateSpeedLimit(job);
    this.updateActions(job);
    this.fileDrag.update(job);
  }

  private updateProgress(job: JobView): void {
    if (job.size !== undefined && job.size > 0) {
      this.progress.max = job.size;
      this.progress.value = Math.min(job.received, job.size);
    } else if (job.size === 0) {
      this.progress.max = 1;
      this.progress.value = job.state === 'saved' || job.state === 'saving' ? 1 : 0;
    } else if (job.state === 'running') {
      this.progress.removeAttribute('value'); // unknown size: indeterminate while it runs
    } else {
      // Not running: an empty track. Firefox draws an indeterminate bar full, like a finished one.
      this.progress.max = 1;
      this.progress.value = job.state === 'saved' || job.state === 'saving' ? 1 : 0;
    }
  }

  private updateError(job: JobView): void {
    if (job.error) {
      setText(this.error, failureText(job.failure));
      if (!this.error.isConnected) this.details.before(this.error);
    } else {
      this.error.remove();
    }
  }

  /** Present only while the job waits to retry (like the error line). */
  private updateRetry(job: JobView): void {
    const text = retryText(job);
    setText(this.retry, text);
    if (text && !this.retry.isConnected) this.details.before(this.retry);
    if (!text) this.retry.remove();
  }

  /** In the details only when there are notices: an empty list would still be announced as one. */
  private updateNotices(job: JobView): void {
    const renamed = job.renamedFrom === undefined ? [] : [t('savedUnderSafeName', job.filename, job.renamedFrom)];
    const shown = [...renamed, ...job.notices.slice(-NOTICES_SHOWN).map(noticeText)];
    if (shown.length === 0) return this.notices.remove();
    if (!this.notices.isConnected) this.mirrors.element.before(this.notices);
    const current = [...this.notices.children].map((li) => li.textContent);
    if (current.length === shown.length && current.every((text, i) => text === shown[i])) return;
    this.notices.replaceChildren(...shown.map((notice) => h('li', {}, notice)));
    const earlier = job.notices.length - shown.length;
    this.notices.title = earlier > 0 ? plural(earlier, 'earlierNoticesOne', 'earlierNoticesOther') : '';
  }

  /**
   * A download that still has bytes to fetch can have its own limit. The field is left alone while
   * edited, and while it shows what was refused (beside the words saying so).
   */
  private updateSpeedLimit(job: JobView): void {
    this.speedLimitField.hidden = !['queued', 'running', 'paused'].includes(job.state);
    this.speedLimit.setAttribute('aria-label', `${t('jobSpeedLimit')} ${jobName(job)}`);
    this.speedLimitClear.setAttribute('aria-label', `${t('noLimit')} ${jobName(job)}`);
    this.speedLimitClear.hidden = job.speedLimit === undefined;
    if (document.activeElement === this.speedLimit || !this.speedLimitError.hidden) return;
    const kb = speedLimitField(job.speedLimit, decimalPoint());
    if (this.speedLimit.value !== kb) this.speedLimit.value = kb;
  }

  /** What was typed cannot be a limit: say so and which limit stays; nothing is sent. */
  private refuseSpeedLimit(): void {
    const kept = this.job.speedLimit === undefined ? t('speedLimitKeptNone') : t('speedLimitKept', formatRate(this.job.speedLimit));
    this.showSpeedLimitError(`${UNIT_BOUNDS.speedLimitBytesPerSec()} ${kept}`);
  }

  private showSpeedLimitError(message: string): void {
    setText(this.speedLimitError, message);
    this.speedLimitError.hidden = message === '';
    if (message === '') this.speedLimit.removeAttribute('aria-invalid');
    else this.speedLimit.setAttribute('aria-invalid', 'true');
  }

  /**
   * Rebuilds the buttons only when the set changes. Focus stays on the first line's action (Pause
   * becomes Resume) or at its place among the details' buttons; when its button is gone, the
   * row's action (Cancel becomes Undo) or the row's name takes it, never the page.
   */
  private updateActions(job: JobView): void {
    const actions = rowActions(job, this.controls?.aria2Available() ?? false);
    const play = canPlayHere(job, this.canPlayType);
    const moves = queueMoves(job);
    const name = jobName(job);
    // The download's name is part of each button's accessible name, so a rename rebuilds them too.
    const key = `${name}\n${play}\n${moves.join(',')}\n${actions.map((a) => `${a}:${actionLabel(a, job)}`).join(',')}`;
    if (key === this.actionsKey) return;
    this.actionsKey = key;
    const primaryFocused = this.primary.contains(document.activeElement);
    const secondaryFocus = [...this.actions.children].indexOf(document.activeElement!);
    const first = actions[0] !== undefined && PRIMARY.has(actions[0]) ? actions[0] : undefined;
    const rest = first ? actions.slice(1) : actions;
    const primary = first ? this.button(first, job, name) : undefined;
    const secondary = [
      ...(play ? [this.playButton(job, name)] : []),
      ...moves.map((direction) => this.moveButton(direction, name)),
      ...rest.map((action) => this.button(action, job, name)),
    ];
    this.primary.replaceChildren(...(primary ? [primary] : []));
    this.actions.replaceChildren(...secondary);
    this.actions.hidden = secondary.length === 0;
    if (primaryFocused) return void (primary ?? this.toggle).focus();
    if (secondaryFocus >= 0) (secondary[Math.min(secondaryFocus, secondary.length - 1)] ?? primary ?? this.toggle).focus();
  }

  /** Opens the player (not a background action: the popup opens the page itself). */
  private playButton(job: JobView, name: string): HTMLButtonElement {
    const button = h(
      'button',
      { type: 'button', class: 'primary', 'data-testid': 'job-play', 'aria-label': `${t('actionPlay')} ${name}` },
      t('actionPlay'),
    );
    button.addEventListener('click', () => this.openPlayer(this.job));
    return button;
  }

  private moveButton(direction: 'up' | 'down', name: string): HTMLButtonElement {
    const label = t(direction === 'up' ? 'actionMoveUp' : 'actionMoveDown');
    const button = h('button', { type: 'button', 'data-testid': `job-move-${direction}`, 'aria-label': `${label} ${name}` }, label);
    button.addEventListener('click', () => this.controls?.move(this.job, direction));
    return button;
  }

  private button(action: RowAction, job: JobView, name: string): HTMLButtonElement {
    const label = actionLabel(action, job);
    const button = h(
      'button',
      {
        type: 'button',
        class: action === 'cancel' ? 'danger' : undefined,
        'data-testid': `job-${action}`,
        // The visible label first, then which download (several rows have a "Pause").
        'aria-label': `${label} ${name}`,
      },
      label,
    );
    if (action === 'relink') button.addEventListener('click', () => this.showRelinkForm());
    else button.addEventListener('click', () => this.onAction(action, this.job, button));
    return button;
  }

  /** The inline form for a new address: Continue keeps the stored bytes when it may; else Start over. */
  private showRelinkForm(): void {
    const existing = this.element.querySelector<HTMLFormElement>('.relink');
    if (existing) return void existing.querySelector('input')?.focus();
    const inputId = `job-${this.job.id}-relink`;
    const input = h('input', { type: 'url', id: inputId, required: true, placeholder: 'https://…', 'data-testid': 'job-relink-input' });
    const error = h('p', { class: 'error-text', role: 'alert', 'data-testid': 'job-relink-error' });
    const startOver = h('button', { type: 'button', class: 'danger', 'data-testid': 'job-relink-start-over' }, t('relinkStartOver'));
    const submit = h('button', { type: 'submit', class: 'primary', 'data-testid': 'job-relink-submit' }, t('relinkContinue'));
    const close = h('button', { type: 'button' }, t('relinkClose'));
    error.hidden = true;
    startOver.hidden = true;
    const form = h(
      'form',
      { class: 'relink', 'data-testid': 'job-relink-form' },
      h('label', { for: inputId }, t('relinkLabel', this.job.filename)),
      input,
      h('div', { class: 'relink-buttons' }, submit, startOver, close),
      error,
    );
    const send = async (fresh: boolean) => {
      error.hidden = true;
      submit.disabled = startOver.disabled = true;
      try {
        const mismatch = await this.relink?.(this.job, input.value.trim(), fresh);
        if (mismatch === undefined) {
          // The form goes with the focus in it: the row's first line takes it, not the page.
          form.remove();
          return this.focus();
        }
        setText(error, t('relinkMismatch', mismatch));
        startOver.hidden = false;
      } catch (caught) {
        setText(error, sentence(caught instanceof Error ? caught.message : String(caught)));
      } finally {
        error.hidden = error.textContent === '';
        submit.disabled = startOver.disabled = false;
      }
    };
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      void send(false);
    });
    startOver.addEventListener('click', () => void send(true));
    close.addEventListener('click', () => {
      form.remove();
      this.actions.querySelector<HTMLButtonElement>('[data-testid="job-relink"]')?.focus();
    });
    this.actions.after(form);
    input.focus();
  }
}

/** The UI language's decimal point ("," in German), which the speed limit field reads and writes. */
function decimalPoint(): string {
  return (
    numberFormat()
      .formatToParts(1.5)
      .find((part) => part.type === 'decimal')?.value ?? '.'
  );
}
