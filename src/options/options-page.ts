import { BackgroundError, callBackground, type RequestOf, type RequestType } from '../messages';
import { bareRequest, errorText, NOT_CONNECTED } from '../pages-shared/connection';
import { h, setText } from '../pages-shared/dom';
import { formatSize } from '../words/format';
import { formatCount, t } from '../words/i18n';
import { DEFAULT_SETTINGS, mergeSettings, parseSettings, type Settings, type SettingsError } from '../settings/schema';
import { exportJson, FILE_LIMITS, importInput, readSettingsFile } from '../settings/settings-file';
import { OptionsForm } from './form-view';
import { changeLine, importChanges, sendsMore, type ImportChange } from './import-changes';
import { downloadJson, exportFilename } from './import-export';
import { errorLine, formToSettings, settingsToForm } from './settings-form';

export interface OptionsDeps {
  /** `browser.runtime.sendMessage`; undefined outside the extension. */
  send?: (message: unknown) => Promise<unknown>;
  /** Saves a file for the user (export); a blob-URL download by default. */
  download?: (json: string, filename: string) => void;
}

/** The options page: the settings form, its error summary, save, import/export and reset. */
export class OptionsPage {
  readonly form: OptionsForm;
  private defaults: Settings = parseSettings(DEFAULT_SETTINGS);
  private readonly banner = h('p', { class: 'banner', role: 'status' });
  private readonly status = h('span', { class: 'status', 'data-testid': 'settings-status', role: 'status' });
  private readonly errors = h('div', { class: 'errors', 'data-testid': 'settings-errors', tabindex: -1 });
  private readonly saveButton = h('button', { type: 'submit', class: 'primary', 'data-testid': 'settings-save' }, t('save'));
  /** Changes in the form that are not stored yet. */
  private unsaved = false;
  private readonly importInput = h('input', {
    type: 'file',
    accept: '.json,application/json',
    class: 'visually-hidden',
    'data-testid': 'settings-import',
  });

  constructor(
    root: HTMLElement,
    private readonly deps: OptionsDeps,
  ) {
    this.form = new OptionsForm(
      (rule, sampleUrl) => this.call({ type: 'test-mirror-rule', rule, sampleUrl }),
      () => {
        this.unsaved = true;
        this.setStatus(t('statusUnsaved'), 'pending');
      },
      (endpoint) => this.call({ type: 'aria2-test', ...endpoint }),
    );
    const exportButton = h(
      'button',
      { type: 'button', 'data-testid': 'settings-export', onclick: () => void this.export() },
      t('exportSettings'),
    );
    const resetButton = h('button', { type: 'button', 'data-testid': 'settings-reset', onclick: () => this.reset() }, t('resetSettings'));
    this.importInput.addEventListener('change', () => void this.import());
    this.banner.hidden = true;
    this.errors.hidden = true;
    // The summary leads the form, where a keyboard or screen-reader user lands after a failed save.
    this.form.element.prepend(this.errors);
    this.form.element.append(
      h(
        'div',
        { class: 'bar' },
        this.saveButton,
        this.status,
        h('div', { class: 'bar-end' }, exportButton, h('label', { class: 'button' }, this.importInput, t('importSettings')), resetButton),
      ),
    );
    this.form.element.addEventListener('submit', (event) => {
      event.preventDefault();
      void this.save();
    });
    this.form.element.addEventListener('change', () => this.form.showErrors(formToSettings(this.form.read()).errors, true));
    root.replaceChildren(
      h('header', { class: 'page-header' }, h('h1', {}, t('optionsTitle'))),
      h('main', {}, this.banner, this.form.element),
    );

    if (!deps.send) {
      setText(this.banner, NOT_CONNECTED);
      this.banner.hidden = false;
      for (const control of [this.saveButton, exportButton]) control.disabled = true;
      this.enableImport(false);
      this.form.write(settingsToForm(this.defaults));
    }
  }

  private enableImport(enabled: boolean): void {
    this.importInput.disabled = !enabled;
    this.importInput.parentElement!.classList.toggle('disabled', !enabled);
  }

  /** Changes in the form not stored yet: leaving the page asks first (see main.ts). */
  get hasUnsavedChanges(): boolean {
    return this.unsaved;
  }

  /** Fills the form with the stored settings. */
  async load(): Promise<void> {
    if (!this.deps.send) return;
    this.form.enabled = false;
    this.saveButton.disabled = true;
    this.setStatus(t('statusLoading'), 'pending');
    try {
      const { settings, defaults } = await this.call(bareRequest('get-settings'));
      this.defaults = defaults;
      this.form.write(settingsToForm(settings));
      this.setStatus('', 'idle');
    } catch (error) {
      this.form.write(settingsToForm(this.defaults));
      this.setStatus(t('statusLoadFailed', errorText(error)), 'error');
    } finally {
      this.form.enabled = true;
      this.saveButton.disabled = false;
    }
  }

  async save(): Promise<boolean> {
    const values = this.form.read();
    const { settings, errors } = formToSettings(values);
    if (errors.length > 0) return this.fail(errors);
    this.saveButton.disabled = true;
    try {
      const reply = await this.call({ type: 'set-settings', settings });
      this.form.write(
        settingsToForm(
          reply.settings,
          values.rules.map((r) => r.sampleUrl),
        ),
      );
      this.showSummary([]);
      this.unsaved = false;
      this.setStatus(t('statusSaved'), 'ok');
      return true;
    } catch (error) {
      return this.fail(refusal(error));
    } finally {
      this.saveButton.disabled = false;
    }
  }

  /** The stored settings as a file, without the aria2 token (settings-file.ts). */
  private async export(): Promise<void> {
    try {
      const { settings } = await this.call(bareRequest('get-settings'));
      (this.deps.download ?? downloadJson)(exportJson(settings), exportFilename());
      this.setStatus(t('statusExported'), 'ok');
    } catch (error) {
      this.setStatus(t('statusExportFailed', errorText(error)), 'error');
    }
  }

  /**
   * Reads the chosen file within bounds and checks it here first (so nothing is stored when it is
   * wrong), lists every change it makes and asks, then saves it. A plain-http aria2 address outside
   * the local network needs the user's own yes: a file cannot carry it.
   */
  private async import(): Promise<void> {
    const file = this.importInput.files?.[0];
    this.importInput.value = ''; // choosing the same file again fires change again
    if (!file) return;
    const notImported = (errors: SettingsError[]) => void this.fail(errors, t('statusNotImported', file.name), false);
    if (file.size > FILE_LIMITS.bytes) return notImported([{ field: '', message: t('errorFileTooLarge', formatSize(FILE_LIMITS.bytes)) }]);
    const read = readSettingsFile(await file.text());
    if ('errors' in read) return notImported(read.errors);
    try {
      const { settings: stored } = await this.call(bareRequest('get-settings'));
      const { input, plainEndpoint } = importInput(stored, read.value);
      const changes = importChanges(stored, mergeSettings(stored, input));
      this.showSummary([]);
      if (changes.length === 0) return this.setStatus(t('statusImportNothing', file.name), 'ok');
      if (!(await this.confirmImport(file.name, changes, plainEndpoint))) {
        return this.setStatus(t('statusImportDeclined', file.name), 'idle');
      }
      if (plainEndpoint) input.aria2PlainConfirmed = true;
      const { settings } = await this.call({ type: 'import-settings', json: JSON.stringify(input) });
      this.form.write(settingsToForm(settings));
      this.unsaved = false;
      this.setStatus(t('statusImported', file.name), 'ok');
    } catch (error) {
      notImported(refusal(error));
    }
  }

  /**
   * Shows above the form every change an import makes (and, for a plain-http aria2 address outside
   * the local network, a box to say it is the user's own: Import waits for it); resolves with
   * whether to apply it. No other file can be chosen meanwhile.
   */
  private confirmImport(filename: string, changes: readonly ImportChange[], plainEndpoint?: string): Promise<boolean> {
    this.enableImport(false);
    return new Promise((resolve) => {
      const answer = (apply: boolean) => {
        box.remove();
        this.enableImport(true);
        resolve(apply);
      };
      const apply = h(
        'button',
        { type: 'button', class: 'primary', 'data-testid': 'import-confirm-apply', onclick: () => answer(true) },
        t('importApply'),
      );
      const plain = plainEndpoint ? plainQuestion(plainEndpoint, apply) : [];
      const title = changes.some(sendsMore) ? t('importConfirmTitle', filename) : t('importChangesTitle', filename);
      const box = h(
        'div',
        { class: 'confirm', role: 'group', 'aria-labelledby': 'import-confirm-title', tabindex: -1, 'data-testid': 'import-confirm' },
        h('p', { id: 'import-confirm-title' }, h('strong', {}, title)),
        h('ul', {}, ...changes.map((change) => h('li', {}, changeLine(change)))),
        ...plain,
        h(
          'div',
          { class: 'confirm-buttons' },
          apply,
          h('button', { type: 'button', 'data-testid': 'import-confirm-cancel', onclick: () => answer(false) }, t('importDecline')),
        ),
      );
      this.errors.after(box);
      this.setStatus(t('statusImportAsks', filename), 'pending');
      box.focus();
    });
  }

  /** Puts the defaults in the form; they are stored only on Save, so a slip can be undone by reloading. */
  private reset(): void {
    const samples = this.form.read().rules.map((r) => r.sampleUrl);
    this.form.write(settingsToForm(this.defaults, samples));
    this.showSummary([]);
    this.unsaved = true;
    this.setStatus(t('statusDefaults'), 'pending');
    this.saveButton.focus();
  }

  /** Shows problems next to the fields (when they are the form's) and in the summary. */
  private fail(errors: SettingsError[], status = t('statusNotSaved'), inForm = true): false {
    if (inForm) this.form.showErrors(errors);
    this.showSummary(errors, inForm);
    this.setStatus(status, 'error');
    this.errors.focus();
    return false;
  }

  /** The error summary; each line of the form's own errors jumps to its field. */
  private showSummary(errors: readonly SettingsError[], linkToFields = true): void {
    this.errors.hidden = errors.length === 0;
    if (errors.length === 0) return this.errors.replaceChildren();
    const item = (error: SettingsError) => {
      const control = linkToFields ? this.form.controlFor(error.field) : undefined;
      const text = errorLine(error);
      return h('li', {}, control ? h('button', { type: 'button', class: 'link', onclick: () => control.focus() }, text) : text);
    };
    this.errors.replaceChildren(
      h('p', {}, h('strong', {}, errors.length === 1 ? t('problemsOne') : t('problemsOther', formatCount(errors.length)))),
      h('ul', {}, ...errors.map(item)),
    );
  }

  private setStatus(text: string, kind: 'idle' | 'ok' | 'pending' | 'error'): void {
    setText(this.status, text);
    this.status.dataset.kind = kind;
  }

  private call<T extends RequestType>(request: RequestOf<T>) {
    if (!this.deps.send) return Promise.reject(new Error(NOT_CONNECTED));
    return callBackground(this.deps.send, request);
  }
}

/** The question for a plain-http aria2 address outside the local network: `apply` waits for its box. */
function plainQuestion(url: string, apply: HTMLButtonElement): HTMLElement[] {
  const box = h('input', { type: 'checkbox', 'data-testid': 'import-confirm-plain' });
  apply.disabled = true;
  box.addEventListener('change', () => (apply.disabled = !box.checked));
  return [h('p', { class: 'error-text' }, t('importPlainEndpoint', url)), h('label', {}, box, ' ', t('fieldAria2PlainConfirmed'))];
}

/** The background's reasons for refusing, as field errors (or one page-wide error). */
function refusal(error: unknown): SettingsError[] {
  if (error instanceof BackgroundError && error.errors.length > 0) return error.errors;
  return [{ field: '', message: errorText(error) }];
}
