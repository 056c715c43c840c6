import { h } from '../pages-shared/dom';
import { LIMITS, MB, type SettingsError } from '../settings/schema';
import { Field } from './field';
import { MirrorRulesEditor, type TestRule } from './mirror-rules-view';
import { controlOf, type FormValues } from './settings-form';

type Control = HTMLInputElement | HTMLTextAreaElement;

const numberInput = (testId: string, attributes: Record<string, string | number> = {}) =>
  h('input', { type: 'number', inputmode: 'decimal', 'data-testid': testId, ...attributes });
const listInput = (testId: string, placeholder: string) =>
  h('textarea', { rows: 3, spellcheck: 'false', 'data-testid': testId, placeholder });

const { blockBytes, maxConcurrentJobs, connectionsPerServer } = LIMITS;

/**
 * The settings form: builds the controls (with the data-testids the e2e tests use), reads and
 * writes `FormValues`, and shows errors next to the controls they belong to.
 */
export class OptionsForm {
  readonly element: HTMLFormElement;
  readonly rules: MirrorRulesEditor;
  private readonly fields: Record<Exclude<keyof FormValues, 'rules'>, Field<Control>>;
  private readonly rulesError = h('p', { class: 'field-error error-text' });
  /** Controls the user has changed: inline errors show for these until the next save. */
  private readonly touched = new Set<string>();

  constructor(testRule: TestRule, onChange: () => void) {
    this.fields = {
      takeover: new Field(h('input', { type: 'checkbox', 'data-testid': 'setting-takeover' }), 'Take over downloads from the browser', {
        checkbox: true,
        hint: 'Large downloads run in Stitch: resumable, checked, from several mirrors. Smaller ones stay with the browser.',
      }),
      thresholdMb: new Field(numberInput('setting-threshold-mb', { min: 0, step: 'any' }), 'Size threshold', {
        unit: 'MB',
        hint: `Downloads of at least this size, or of unknown size, are taken over. 1 MB = ${MB.toLocaleString('en')} bytes.`,
      }),
      excludedTypes: new Field(listInput('setting-excluded-types', 'application/pdf\nvideo/*'), 'Excluded types', {
        hint: 'One MIME type per line, exact (application/pdf) or a family (video/*). These stay with the browser.',
      }),
      excludedSites: new Field(listInput('setting-excluded-sites', 'example.com'), 'Excluded sites', {
        hint: 'One host per line; a host also covers its subdomains.',
      }),
      concurrent: new Field(numberInput('setting-concurrent', { ...maxConcurrentJobs, step: 1 }), 'Concurrent downloads', {
        hint: `Downloads running at once (${maxConcurrentJobs.min}–${maxConcurrentJobs.max}); the rest wait in the queue.`,
      }),
      connections: new Field(numberInput('setting-connections', { ...connectionsPerServer, step: 1 }), 'Most connections per server', {
        hint: `Stitch starts with two and opens more, up to this number, only while they make the download faster (${connectionsPerServer.min}–${connectionsPerServer.max}; browsers allow 6 per server).`,
      }),
      siteConnections: new Field(listInput('setting-connections-per-site', 'downloads.example.com 1'), 'Connections per site', {
        hint: `One site per line: a host and the most connections to it (${connectionsPerServer.min}–${connectionsPerServer.max}), like downloads.example.com 1. A host also covers its subdomains. Some sites ban downloaders that open several connections: give them 1.`,
      }),
      minBlockKib: new Field(numberInput('setting-min-block-kib', { min: blockBytes.min / 1024, max: blockBytes.max / 1024, step: 1 }), 'Smallest block', {
        unit: 'KiB',
      }),
      maxBlockKib: new Field(numberInput('setting-max-block-kib', { min: blockBytes.min / 1024, max: blockBytes.max / 1024, step: 1 }), 'Largest block', {
        unit: 'KiB',
      }),
      speedLimitKbps: new Field(numberInput('setting-speed-limit-kbps', { min: 0, step: 'any', placeholder: 'No limit' }), 'Speed limit', {
        unit: 'kB/s',
        hint: 'For all downloads together. Empty: no limit. 1 kB/s = 1,000 bytes per second.',
      }),
      notifyFailed: new Field(h('input', { type: 'checkbox', 'data-testid': 'setting-notify-failed' }), 'Notify me when a download fails', {
        checkbox: true,
      }),
      notifyCompleted: new Field(h('input', { type: 'checkbox', 'data-testid': 'setting-notify-completed' }), 'Notify me when a download is saved', {
        checkbox: true,
      }),
    };
    this.rules = new MirrorRulesEditor(testRule, onChange);
    const f = this.fields;
    this.rulesError.hidden = true;
    this.element = h(
      'form',
      { 'data-testid': 'settings-form', novalidate: true, 'aria-label': 'Stitch settings' },
      section('Taking over downloads', f.takeover, f.thresholdMb, f.excludedTypes, f.excludedSites),
      section(
        'Speed and connections',
        f.concurrent,
        f.connections,
        f.siteConnections,
        h('div', { class: 'pair' }, f.minBlockKib.element, f.maxBlockKib.element),
        h('p', { class: 'hint muted pair-hint' }, `Bounds of the block size Stitch picks per request (${blockBytes.min / 1024} KiB – ${blockBytes.max / 1024 / 1024} MiB).`),
        f.speedLimitKbps,
      ),
      section('Notifications', f.notifyFailed, f.notifyCompleted),
      h(
        'section',
        { 'aria-labelledby': 'mirrors-title' },
        h('h2', { id: 'mirrors-title' }, 'Mirrors'),
        h(
          'p',
          { class: 'muted' },
          'When a download’s URL matches a rule’s pattern, Stitch also fetches the same file from each mirror, checks that every mirror serves the same size, and drops a mirror that serves different bytes.',
        ),
        this.rulesError,
        this.rules.element,
      ),
    );
    // Inline validation happens on commit (change), not on each keystroke.
    this.element.addEventListener('change', (event) => {
      const key = this.keyOf(event.target);
      if (key) this.touched.add(key);
    });
    this.element.addEventListener('input', onChange);
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
      minBlockKib: f.minBlockKib.control.value,
      maxBlockKib: f.maxBlockKib.control.value,
      speedLimitKbps: f.speedLimitKbps.control.value,
      rules: this.rules.read(),
      notifyFailed: (f.notifyFailed.control as HTMLInputElement).checked,
      notifyCompleted: (f.notifyCompleted.control as HTMLInputElement).checked,
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
    f.minBlockKib.control.value = values.minBlockKib;
    f.maxBlockKib.control.value = values.maxBlockKib;
    f.speedLimitKbps.control.value = values.speedLimitKbps;
    (f.notifyFailed.control as HTMLInputElement).checked = values.notifyFailed;
    (f.notifyCompleted.control as HTMLInputElement).checked = values.notifyCompleted;
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
    for (const [name, field] of Object.entries(this.fields)) if (field.control === target) return SETTING_OF[name as keyof typeof SETTING_OF];
    for (let i = 0; i < this.rules.count; i++) {
      for (const part of ['pattern', 'mirrors'] as const) if (this.rules.field(i, part)?.control === target) return `mirrorRules.${i}.${part}`;
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
  minBlockKib: 'minBlockBytes',
  maxBlockKib: 'maxBlockBytes',
  speedLimitKbps: 'speedLimitBytesPerSec',
  notifyFailed: 'notifyFailed',
  notifyCompleted: 'notifyCompleted',
} as const;

function section(title: string, ...fields: (Field<Control> | HTMLElement)[]): HTMLElement {
  const id = `section-${title.toLowerCase().replace(/\W+/g, '-')}`;
  return h(
    'section',
    { 'aria-labelledby': id },
    h('h2', { id }, title),
    ...fields.map((f) => (f instanceof Field ? f.element : f)),
  );
}
