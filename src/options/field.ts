import { h } from '../pages-shared/dom';
import { sentence } from '../words/i18n';

let nextId = 0;

/** A unique element id for label/description wiring (rule rows come and go). */
export function uid(prefix: string): string {
  return `${prefix}-${++nextId}`;
}

/**
 * A labelled control with an optional hint and an error line, wired for screen readers:
 * the control is described by the hint and the error, and marked invalid while it has one.
 */
export class Field<C extends HTMLInputElement | HTMLTextAreaElement> {
  readonly element: HTMLElement;
  private readonly error: HTMLElement;

  constructor(
    readonly control: C,
    label: string,
    options: { hint?: string; unit?: string; checkbox?: boolean } = {},
  ) {
    control.id ||= uid('field');
    const hintId = `${control.id}-hint`;
    const errorId = `${control.id}-error`;
    this.error = h('p', { class: 'field-error error-text', id: errorId });
    this.error.hidden = true;
    control.setAttribute('aria-describedby', options.hint ? `${hintId} ${errorId}` : errorId);
    const hint = options.hint ? h('p', { class: 'hint muted', id: hintId }, options.hint) : null;
    const unit = options.unit ? h('span', { class: 'unit muted', 'aria-hidden': 'true' }, options.unit) : null;
    this.element = options.checkbox
      ? h('div', { class: 'field checkbox' }, h('label', { for: control.id }, control, ` ${label}`), hint, this.error)
      : h(
          'div',
          { class: 'field' },
          h('label', { for: control.id }, label, options.unit ? h('span', { class: 'visually-hidden' }, ` (${options.unit})`) : null),
          h('div', { class: 'control' }, control, unit),
          hint,
          this.error,
        );
  }

  /** Shows the messages under the control (none: clears). */
  showErrors(messages: readonly string[]): void {
    const sentences = messages.map(sentence);
    this.error.replaceChildren(...sentences.flatMap((m, i) => (i === 0 ? [m] : [h('br'), m])));
    this.error.hidden = messages.length === 0;
    if (messages.length > 0) this.control.setAttribute('aria-invalid', 'true');
    else this.control.removeAttribute('aria-invalid');
  }
}
