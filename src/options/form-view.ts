import { h } from '../pages-shared/dom';
import { formatSize, KB, MB } from '../words/format';
import { formatCount, t } from '../words/i18n';
import { LIMITS, type SettingsError } from '../settings/schema';
import { Field } from './field';
import { MirrorRulesEditor, type TestRule } from './mirror-rules-view';
import { Aria2TestButton, type TestAria2 } from './aria2-test';
import { controlOf, type FormValues } from './settings-form';

type Control = HTMLInputElement | HTMLTextAreaElement;

const numberInput = (testId: string, attributes: Record<string, string | number> = {}) =>
  h('input', { type: 'number', inputmode: 'decimal', 'data-testid': testId, ...attributes });
const listInput = (testId: string, placeholder: string) =>
  h('textarea', { rows: 3, spellcheck: 'false', 'data-testid': testId, placeholder });

const { blockBytes, maxConcurrentJobs, connectionsPerServer, stallSeconds } = LIMITS;

/**
 * The settings form: builds the controls (with the data-testids the e2e tests use), reads and
 * writes `FormValues`, and shows errors next to the controls they belong to.
 */
export class OptionsForm {
  readonly element: HTMLFormElement;
  /** Holds every field: disabled while the stored settings load, so nothing typed is overwritten. */
  private readonly sections: HTMLFieldSetElement;
  readonly rules: MirrorRulesEditor;
  private readonly fields: Record<Exclude<keyof FormValues, 'rules'>, Field<Control>>;
  private readonly rulesError = h('p', { class: 'field-error error-text' });
  /** Controls the user has changed: inline errors show for these until the next save. */
  private readonly touched = new Set<string>();

  constructor(testRule: TestRule, onChange: () => void, testAria2: TestAria2) {
    this.fields = {
      takeover: new Field(h('input', { type: 'checkbox', 'data-testid': 'setting-takeover' }), t('fieldTakeover'), {
        checkbox: true,
        hint: t('hintTakeover'),
      }),
      thresholdMb: new Field(numberInput('setting-threshold-mb', { min: 0, step: 'any' }), t('fieldThreshold'), {
        unit: 'MB',
        hint: t('hintThreshold', formatCount(MB)),
      }),
      excludedTypes: new Field(listInput('setting-excluded-types', 'application/pdf\nvideo/*'), t('fieldExcludedTypes'), {
        hint: t('hintExcludedTypes'),
      }),
      excludedSites: new Field(listInput('setting-excluded-sites', 'example.com'), t('fieldExcludedSites'), {
        hint: t('hintExcludedSites'),
      }),
      concurrent: new Field(numberInput('setting-concurrent', { ...maxConcurrentJobs, step: 1 }), t('fieldConcurrent'), {
        hint: t('hintConcurrent', formatCount(maxConcurrentJobs.min), formatCount(maxConcurrentJobs.max)),
      }),
      connections: new Field(numberInput('setting-connections', { ...connectionsPerServer, step: 1 }), t('fieldConnections'), {
        hint: t('hintConnections', formatCount(connectionsPerServer.min), formatCount(connectionsPerServer.max)),
      }),
      siteConnections: new Field(listInput('setting-connections-per-site', 'downloads.example.com 1'), t('fieldSiteConnections'), {
        hint: t('hintSiteConnections', formatCount(connectionsPerServer.min), formatCount(connectionsPerServer.max)),
      }),
      stall: new Field(numberInput('setting-stall-seconds', { ...stallSeconds, step: 1 }), t('fieldStall'), {
        unit: 's',
        hint: t('hintStall', formatCount(stallSeconds.min), formatCount(stallSeconds.max)),
      }),
      minBlockKb: new Field(
        numberInput('setting-min-block-kib', { min: blockBytes.min / KB, max: blockBytes.max / KB, step: 1 }),
        t('fieldMinBlock'),
        {
          unit: 'KB',
        },
      ),
      maxBlockKb: new Field(
        numberInput('setting-max-block-kib', { min: blockBytes.min / KB, max: blockBytes.max / KB, step: 1 }),
        t('fieldMaxBlock'),
        {
          unit: 'KB',
        },
      ),
      speedLimitKbps: new Field(
        numberInput('setting-speed-limit-kbps', { min: 0, step: 'any', placeholder: t('noLimit') }),
        t('fieldSpeedLimit'),
        {
          unit: 'KB/s',
          hint: t('hintSpeedLimit', formatCount(KB)),
        },
      ),
      notifyFailed: new Field(h('input', { type: 'checkbox', 'data-testid': 'setting-notify-failed' }), t('fieldNotifyFailed'), {
        checkbox: true,
      }),
      notifyCompleted: new Field(h('input', { type: 'checkbox', 'data-testid': 'setting-notify-completed' }), t('fieldNotifyCompleted'), {
        checkbox: true,
      }),
      alwaysTakeOver: new Field(h('input', { type: 'checkbox', 'data-testid': 'setting-always-take-over' }), t('fieldAlwaysTakeOver'), {
        checkbox: true,
        hint: t('hintAlwaysTakeOver'),
      }),
      saveWhileDownloading: new Field(
        h('input', { type: 'checkbox', 'data-testid': 'setting-save-while-downloading' }),
        t('fieldSaveWhileDownloading'),
        { checkbox: true, hint: t('hintSaveWhileDownloading') },
      ),
      aria2Url: new Field(
        h('input', { type: 'url', spellcheck: 'false', 'data-testid': 'setting-aria2-url', placeholder: 'http://127.0.0.1:6800/jsonrpc' }),
        t('fieldAria2Url'),
        { hint: t('hintAria2Url') },
      ),
      aria2Secret: new Field(
        h('input', { type: 'password', autocomplete: 'off', 'data-testid': 'setting-aria2-secret' }),
        t('fieldAria2Secret'),
      ),
      aria2PlainConfirmed: new Field(
        h('input', { type: 'checkbox', 'data-testid': 'setting-aria2-plain-confirmed' }),
        t('fieldAria2PlainConfirmed'),
        { checkbox: true, hint: t('hintAria2PlainConfirmed') },
      ),
      aria2MinMb: new Field(
        numberInput('setting-aria2-min-mb', { min: 0, step: 'any', placeholder: t('aria2NoSize') }),
        t('fieldAria2MinSize'),
        {
          unit: 'MB',
        },
      ),
      aria2Sites: new Field(listInput('setting-aria2-sites', 'nas-friendly.example'), t('fieldAria2Sites'), {
        hint: t('hintAria2Sites'),
      }),
    };
    // Only Chrome can save while downloading (its offscreen document opens the worker's stream); Firefox saves once complete.
    this.fields.saveWhileDownloading.element.hidden = typeof chrome === 'undefined' || !('offscreen' in chrome);
    this.rules = new MirrorRulesEditor(testRule, onChange);
    const f = this.fields;
    const aria2Test = new Aria2TestButton(testAria2, () => ({
      url: f.aria2Url.control.value,
      secret: f.aria2Secret.control.value,
      plainConfirmed: (f.aria2PlainConfirmed.control as HTMLInputElement).checked,
    }));
    this.rulesError.hidden = true;
    this.sections = h(
      'fieldset',
      { class: 'sections' },
      section(
        'takeover',
        t('sectionTakeover'),
        f.takeover,
        f.alwaysTakeOver,
        f.thresholdMb,
        f.excludedTypes,
        f.excludedSites,
        f.saveWhileDownloading,
      ),
      section(
        'speed',
        t('sectionSpeed'),
        f.concurrent,
        f.connections,
        f.siteConnections,
        f.stall,
        h('div', { class: 'pair' }, f.minBlockKb.element, f.maxBlockKb.element),
        h('p', { class: 'hint muted pair-hint' }, t('hintBlocks', formatSize(blockBytes.min), formatSize(blockBytes.max))),
        f.speedLimitKbps,
      ),
      section('notifications', t('sectionNotifications'), f.notifyFailed, f.notifyCompleted),
      section(
        'aria2',
        t('sectionAria2'),
        h('p', { class: 'muted' }, t('aria2Intro')),
        f.aria2Url,
        f.aria2Secret,
        f.aria2PlainConfirmed,
        aria2Test.element,
        f.aria2MinMb,
        f.aria2Sites,
      ),
      h(
        'section',
        { 'aria-labelledby': 'mirrors-title' },
        h('h2', { id: 'mirrors-title' }, t('sectionMirrors')),
        h('p', { class: 'muted' }, t('mirrorsIntro')),
        this.rulesError,
        this.rules.element,
      ),
    );
    this.element = h('form', { 'data-testid': 'settings-form', novalidate: true, 'aria-label': t('optionsForm') }, this.sections);
    // Inline validation happens on commit (change), not on each keystroke.
    this.element.addEventListener('change', (event) => {
      const key = this.keyOf(event.target);
      if (key) this.touched.add(key);
    });
    this.element.addEventListener('input', onChange);
  }

  set enabled(enabled: boolean) {
    this.sections.disabled = !enabled;
  }

  read(): FormValues {
    const f = this.fields;
    return {
      takeover: (f.takeover.control as HTMLInputElement).checked,
      thresholdMb: f.thresholdMb.control.value,
      excludedTypes: f.excludedTypes.control.value,
      excludedSites: f.excludedSites.control.value,
      concurrent: f.concurrent.control.value,
      connections: f.connections.control.value,
      siteConnections: f.siteConnections.control.value,
      stall: f.stall.control.value,
      minBlockKb: f.minBlockKb.control.value,
      maxBlockKb: f.maxBlockKb.control.value,
      speedLimitKbps: f.speedLimitKbps.control.value,
      rules: this.rules.read(),
      notifyFailed: (f.notifyFailed.control as HTMLInputElement).checked,
      notifyCompleted: (f.notifyCompleted.control as HTMLInputElement).checked,
      alwaysTakeOver: (f.alwaysTakeOver.control as HTMLInputElement).checked,
      saveWhileDownloading: (f.saveWhileDownloading.control as HTMLInputElement).checked,
      aria2Url: f.aria2Url.control.value,
      aria2Secret: f.aria2Secret.control.value,
      aria2PlainConfirmed: (f.aria2PlainConfirmed.control as HTMLInputElement).checked,
      aria2MinMb: f.aria2MinMb.control.value,
      aria2Sites: f.aria2Sites.control.value,
    };
  }

  write(values: FormValues): void {
    const f = this.fields;
    (f.takeover.control as HTMLInputElement).checked = values.takeover;
    f.thresholdMb.control.value = values.thresholdMb;
    f.excludedTypes.control.value = values.excludedTypes;
    f.excludedSites.control.value = values.excludedSites;
    f.concurrent.control.value = values.concurrent;
    f.connections.control.value = values.connections;
    f.siteConnections.control.value = values.siteConnections;
    f.stall.control.value = values.stall;
    f.minBlockKb.control.value = values.minBlockKb;
    f.maxBlockKb.control.value = values.maxBlockKb;
    f.speedLimitKbps.control.value = values.speedLimitKbps;
    (f.notifyFailed.control as HTMLInputElement).checked = values.notifyFailed;
    (f.notifyCompleted.control as HTMLInputElement).checked = values.notifyCompleted;
    (f.alwaysTakeOver.control as HTMLInputElement).checked = values.alwaysTakeOver;
    (f.saveWhileDownloading.control as HTMLInputElement).checked = values.saveWhileDownloading;
    f.aria2Url.control.value = values.aria2Url;
    f.aria2Secret.control.value = values.aria2Secret;
    (f.aria2PlainConfirmed.control as HTMLInputElement).checked = values.aria2PlainConfirmed;
    f.aria2MinMb.control.value = values.aria2MinMb;
    f.aria2Sites.control.value = values.aria2Sites;
    this.rules.write(values.rules);
    this.touched.clear();
    this.showErrors([]);
  }

  /**
   * Shows each error next to its control. With `onlyTouched`, only controls the user changed
   * (inline validation while editing); otherwise all (after save), and they count as touched.
   */
  showErrors(errors: readonly SettingsError[], onlyTouched = false): void {
    const byControl = new Map<string, string[]>();
    for (const error of errors) {
      const key = controlOf(error.field);
      byControl.set(key, [...(byControl.get(key) ?? []), error.message]);
      if (!onlyTouched) this.touched.add(key);
    }
    const messagesFor = (key: string) => (this.touched.has(key) || !onlyTouched ? (byControl.get(key) ?? []) : []);
    for (const [name, field] of Object.entries(this.fields)) field.showErrors(messagesFor(SETTING_OF[name as keyof typeof SETTING_OF]));
    for (let i = 0; i < this.rules.count; i++) {
      for (const part of ['pattern', 'mirrors'] as const) this.rules.field(i, part)?.showErrors(messagesFor(`mirrorRules.${i}.${part}`));
    }
    const rulesMessages = messagesFor('mirrorRules');
    this.rulesError.textContent = rulesMessages.join(' ');
    this.rulesError.hidden = rulesMessages.length === 0;
  }

  /** The control showing errors for a settings field (to focus it from the error summary). */
  controlFor(field: string): HTMLElement | undefined {
    const key = controlOf(field);
    const rule = /^mirrorRules\.(\d+)\.(pattern|mirrors)$/.exec(key);
    if (rule) return this.rules.field(Number(rule[1]), rule[2] as 'pattern' | 'mirrors')?.control;
    const name = Object.entries(SETTING_OF).find(([, setting]) => setting === key)?.[0] as keyof typeof SETTING_OF | undefined;
    return name ? this.fields[name].control : undefined;
  }

  /** The error key of the control an event came from. */
  private keyOf(target: EventTarget | null): string | undefined {
    for (const [name, field] of Object.entries(this.fields))
      if (field.control === target) return SETTING_OF[name as keyof typeof SETTING_OF];
    for (let i = 0; i < this.rules.count; i++) {
      for (const part of ['pattern', 'mirrors'] as const)
        if (this.rules.field(i, part)?.control === target) return `mirrorRules.${i}.${part}`;
    }
    return undefined;
  }
}

/** Which settings field each form control edits. */
const SETTING_OF = {
  takeover: 'takeover',
  thresholdMb: 'thresholdBytes',
  excludedTypes: 'excludedTypes',
  excludedSites: 'excludedSites',
  concurrent: 'maxConcurrentJobs',
  connections: 'connectionsPerServer',
  siteConnections: 'connectionsPerSite',
  stall: 'stallSeconds',
  minBlockKb: 'minBlockBytes',
  maxBlockKb: 'maxBlockBytes',
  speedLimitKbps: 'speedLimitBytesPerSec',
  notifyFailed: 'notifyFailed',
  notifyCompleted: 'notifyCompleted',
  alwaysTakeOver: 'alwaysTakeOver',
  saveWhileDownloading: 'saveWhileDownloading',
  aria2Url: 'aria2Url',
  aria2Secret: 'aria2Secret',
  aria2PlainConfirmed: 'aria2PlainConfirmed',
  aria2MinMb: 'aria2MinBytes',
  aria2Sites: 'aria2Sites',
} as const;

function section(name: string, title: string, ...fields: (Field<Control> | HTMLElement)[]): HTMLElement {
  const id = `section-${name}`;
  return h('section', { 'aria-labelledby': id }, h('h2', { id }, title), ...fields.map((f) => (f instanceof Field ? f.element : f)));
}
