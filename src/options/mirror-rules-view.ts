import type { MirrorTestResult } from '../messages';
import { h } from '../pages-shared/dom';
import { formatSize } from '../words/format';
import { formatCount, plural, sentence, t } from '../words/i18n';
import { validateMirrorRule, type MirrorRule } from '../settings/schema';
import { Field } from './field';
import { ruleFromValues, type RuleValues } from './settings-form';

/** Asks the background to check each mirror of a rule against a sample URL. */
export type TestRule = (rule: MirrorRule, sampleUrl: string) => Promise<{ original: MirrorTestResult; mirrors: MirrorTestResult[] }>;

const EMPTY_RULE: RuleValues = { pattern: '', mirrors: '', passQuery: false, sendCookies: false, sampleUrl: '' };

/** The list of mirror rules with "Add rule"; each rule has its own test button. */
export class MirrorRulesEditor {
  readonly element: HTMLElement;
  private readonly list = h('ol', { class: 'rules' });
  private readonly addButton = h('button', { type: 'button', 'data-testid': 'mirror-rule-add' }, t('addRule'));
  private rows: RuleRow[] = [];

  constructor(
    private readonly testRule: TestRule,
    private readonly onChange: () => void,
  ) {
    this.addButton.addEventListener('click', () => {
      this.add(EMPTY_RULE).focus();
      this.onChange();
    });
    this.element = h('div', { class: 'rules-editor' }, this.list, this.addButton);
  }

  read(): RuleValues[] {
    return this.rows.map((row) => row.read());
  }

  write(rules: readonly RuleValues[]): void {
    // Same number of rules (after a save): refill in place, keeping test results and focus.
    if (rules.length === this.rows.length) return this.rows.forEach((row, i) => row.write(rules[i]!));
    this.rows = [];
    this.list.replaceChildren();
    for (const rule of rules) this.add(rule);
  }

  /** The field that shows errors for `mirrorRules.<i>.pattern` or `.mirrors`. */
  field(index: number, part: 'pattern' | 'mirrors'): Field<HTMLInputElement | HTMLTextAreaElement> | undefined {
    return this.rows[index]?.[part];
  }

  get count(): number {
    return this.rows.length;
  }

  private add(values: RuleValues): RuleRow {
    const row = new RuleRow(values, this.testRule, () => this.remove(row));
    this.rows.push(row);
    this.list.append(row.element);
    this.renumber();
    return row;
  }

  private remove(row: RuleRow): void {
    const index = this.rows.indexOf(row);
    this.rows.splice(index, 1);
    row.element.remove();
    this.renumber();
    // Keep keyboard users where they were: the next rule, else the add button.
    (this.rows[index] ?? this.rows[index - 1])?.focus();
    if (this.rows.length === 0) this.addButton.focus();
    this.onChange();
  }

  private renumber(): void {
    this.rows.forEach((row, i) => row.setNumber(i + 1));
  }
}

class RuleRow {
  readonly element: HTMLElement;
  readonly pattern: Field<HTMLInputElement>;
  readonly mirrors: Field<HTMLTextAreaElement>;
  private readonly passQuery: Field<HTMLInputElement>;
  private readonly sendCookies: Field<HTMLInputElement>;
  private readonly sample: Field<HTMLInputElement>;
  private readonly legend = h('legend');
  private readonly result = h('div', { class: 'test-result', 'data-testid': 'mirror-rule-test-result', 'aria-live': 'polite' });
  private readonly testButton = h('button', { type: 'button', 'data-testid': 'mirror-rule-test' }, t('testRule'));
  private readonly removeButton = h('button', { type: 'button', class: 'danger', 'data-testid': 'mirror-rule-remove' }, t('removeRule'));

  constructor(
    values: RuleValues,
    private readonly testRule: TestRule,
    onRemove: () => void,
  ) {
    this.pattern = new Field(
      h('input', {
        type: 'text',
        spellcheck: 'false',
        'data-testid': 'mirror-rule-pattern',
        placeholder: 'example.com/releases/',
        value: values.pattern,
      }),
      t('fieldPattern'),
      { hint: t('hintPattern') },
    );
    this.mirrors = new Field(
      h('textarea', {
        rows: 3,
        spellcheck: 'false',
        'data-testid': 'mirror-rule-mirrors',
        placeholder: 'https://mirror.example.org/pub/releases/',
      }),
      t('fieldMirrors'),
      { hint: t('hintMirrors') },
    );
    this.mirrors.control.value = values.mirrors;
    this.passQuery = new Field(h('input', { type: 'checkbox', 'data-testid': 'mirror-rule-pass-query' }), t('fieldPassQuery'), {
      checkbox: true,
      hint: t('hintPassQuery'),
    });
    this.sendCookies = new Field(h('input', { type: 'checkbox', 'data-testid': 'mirror-rule-send-cookies' }), t('fieldSendCookies'), {
      checkbox: true,
      hint: t('hintSendCookies'),
    });
    this.passQuery.control.checked = values.passQuery;
    this.sendCookies.control.checked = values.sendCookies;
    this.sample = new Field(
      h('input', {
        type: 'url',
        spellcheck: 'false',
        'data-testid': 'mirror-rule-sample-url',
        placeholder: 'https://example.com/releases/file.iso',
        value: values.sampleUrl,
      }),
      t('fieldSampleUrl'),
    );
    this.testButton.addEventListener('click', () => void this.test());
    this.removeButton.addEventListener('click', onRemove);
    this.element = h(
      'li',
      { 'data-testid': 'mirror-rule' },
      h(
        'fieldset',
        { class: 'rule' },
        this.legend,
        this.pattern.element,
        this.mirrors.element,
        this.passQuery.element,
        this.sendCookies.element,
        h('div', { class: 'rule-test' }, this.sample.element, this.testButton),
        this.result,
        h('div', { class: 'rule-actions' }, this.removeButton),
      ),
    );
  }

  setNumber(n: number): void {
    const number = formatCount(n);
    this.legend.textContent = t('ruleLegend', number);
    this.removeButton.setAttribute('aria-label', t('removeRuleNumbered', number));
    this.testButton.setAttribute('aria-label', t('testRuleNumbered', number));
  }

  read(): RuleValues {
    return {
      pattern: this.pattern.control.value,
      mirrors: this.mirrors.control.value,
      passQuery: this.passQuery.control.checked,
      sendCookies: this.sendCookies.control.checked,
      sampleUrl: this.sample.control.value,
    };
  }

  write(values: RuleValues): void {
    this.pattern.control.value = values.pattern;
    this.mirrors.control.value = values.mirrors;
    this.passQuery.control.checked = values.passQuery;
    this.sendCookies.control.checked = values.sendCookies;
    this.sample.control.value = values.sampleUrl;
  }

  focus(): void {
    this.pattern.control.focus();
  }

  private async test(): Promise<void> {
    const values = this.read();
    const rule = ruleFromValues(values);
    const problems = validateMirrorRule(rule).map((e) => sentence(e.message));
    if (values.sampleUrl.trim() === '') problems.push(t('testNeedsSample'));
    if (problems.length > 0) return this.showResult(problemList(problems));
    this.testButton.disabled = true;
    this.showResult([h('p', { class: 'muted' }, t('testing'))]);
    try {
      this.showResult(testResultNodes(await this.testRule(rule, values.sampleUrl.trim())));
    } catch (error) {
      this.showResult(problemList([sentence(error instanceof Error ? error.message : String(error))]));
    } finally {
      this.testButton.disabled = false;
    }
  }

  private showResult(nodes: Node[]): void {
    this.result.replaceChildren(...nodes);
  }
}

function problemList(problems: string[]): Node[] {
  return [h('ul', { class: 'error-text' }, ...problems.map((p) => h('li', {}, p)))];
}

/** The test's answer: the original, then one line per mirror, each passed or not and why. */
export function testResultNodes(reply: { original: MirrorTestResult; mirrors: MirrorTestResult[] }): Node[] {
  const line = (label: string, result: MirrorTestResult) =>
    h(
      'li',
      { class: result.ok ? 'pass' : 'fail', 'data-ok': String(result.ok), title: result.url },
      h('span', { class: 'mark', 'aria-hidden': 'true' }, result.ok ? '✓' : '✗'),
      h('span', { class: 'visually-hidden' }, result.ok ? t('testPassed') : t('testFailed')),
      h('span', { class: 'result-url' }, label),
      ' — ',
      result.message,
      result.size !== undefined ? h('span', { class: 'muted' }, ` (${formatSize(result.size)})`) : null,
    );
  const passed = reply.mirrors.filter((m) => m.ok).length;
  const verdict = reply.original.ok
    ? plural(reply.mirrors.length, 'testVerdictOne', 'testVerdictOther', formatCount(passed))
    : t('testNoSize');
  return [
    h('p', { class: 'verdict' }, verdict),
    h('ul', { class: 'results' }, line(t('testSample', reply.original.url), reply.original), ...reply.mirrors.map((m) => line(m.url, m))),
  ];
}
