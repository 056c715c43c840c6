import type { Aria2Check } from '../messages';
import { h } from '../pages-shared/dom';
import { aria2ProblemText } from '../words/aria2-text';
import { t } from '../words/i18n';

export type TestAria2 = (endpoint: { url: string; secret: string; plainConfirmed: boolean }) => Promise<Aria2Check>;

/** _Test_ beside the aria2 address: asks aria2 for its version through the background and says what came back. */
export class Aria2TestButton {
  readonly element: HTMLElement;
  private readonly result = h('p', { class: 'hint', role: 'status', 'data-testid': 'aria2-test-result' });

  constructor(
    private readonly test: TestAria2,
    private readonly endpoint: () => { url: string; secret: string; plainConfirmed: boolean },
  ) {
    const button = h('button', { type: 'button', 'data-testid': 'aria2-test', onclick: () => void this.run(button) }, t('aria2Test'));
    this.element = h('div', { class: 'field' }, button, this.result);
  }

  private async run(button: HTMLButtonElement): Promise<void> {
    button.disabled = true;
    this.result.textContent = t('aria2Testing');
    try {
      const check = await this.test(this.endpoint());
      this.result.textContent = 'version' in check ? t('aria2Works', check.version) : aria2ProblemText(check.problem);
      this.result.classList.toggle('error-text', !('version' in check));
    } finally {
      button.disabled = false;
    }
  }
}
