/** A tiny element builder: enough DOM for two small pages, no framework. */

type Child = Node | string | number | false | null | undefined;
type Attributes = Record<string, string | number | boolean | undefined | EventListener>;

/**
 * `h('button', { type: 'button', 'data-testid': 'job-pause', onclick }, 'Pause')`.
 * Keys starting with `on` attach listeners; `false`/`undefined` attributes are skipped;
 * `true` sets an empty (boolean) attribute.
 */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Attributes = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue;
    if (typeof value === 'function') element.addEventListener(name.slice(2), value);
    else if (name === 'value' && 'value' in element) (element as HTMLInputElement).value = String(value);
    else if (name === 'checked' && element instanceof HTMLInputElement) element.checked = value === true;
    else element.setAttribute(name, value === true ? '' : String(value));
  }
  append(element, children);
  return element;
}

export function append(parent: Element, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.append(child instanceof Node ? child : String(child));
  }
}

/** Sets text only when it changed, so live updates do not disturb screen readers or selection. */
export function setText(element: Element, text: string): void {
  if (element.textContent !== text) element.textContent = text;
}

/** Puts a short message into a polite live region; re-setting the same text is re-announced. */
export function announce(region: Element, message: string): void {
  region.textContent = '';
  // A new text node in a later task is what screen readers reliably pick up.
  setTimeout(() => (region.textContent = message), 50);
}
