import type { UiNotice } from '../messages';
import { h } from '../pages-shared/dom';
import { t } from '../words/i18n';
import { noticeText } from '../words/failure-text';

/** How many page-wide notices are shown (the newest). */
const SHOWN = 5;

/**
 * Page-wide notices (e.g. "Left to the browser: the server refused a second request."), newest
 * first, each a full sentence, with one button that dismisses them all.
 */
export class NoticeList {
  readonly element = h('section', { class: 'notices', 'aria-label': t('noticesLabel') });
  private key = '';

  constructor(private readonly onDismiss: () => void) {
    this.element.hidden = true;
  }

  render(notices: readonly UiNotice[]): void {
    const shown = notices.slice(-SHOWN).reverse();
    const key = shown.map((n) => n.id).join(',');
    if (key === this.key) return;
    this.key = key;
    this.element.hidden = shown.length === 0;
    const items = shown.map((notice) =>
      h(
        'li',
        { 'data-testid': 'notice', title: notice.url },
        h('span', {}, noticeText(notice.message)),
        notice.url ? h('span', { class: 'notice-url muted' }, notice.url) : null,
      ),
    );
    this.element.replaceChildren(
      h('ul', {}, ...items),
      h('button', { type: 'button', class: 'link', onclick: () => this.onDismiss() }, t('dismissNotices')),
    );
  }
}
