import { h } from '../pages-shared/dom';
import { t } from '../words/i18n';

/** Starts a download; resolves with a line to announce, throws with a sentence for the user. */
export type AddUrl = (url: string, saveAs: boolean) => Promise<string>;

/** "Add a URL by hand": a URL field, an "ask where to save" box and a submit button. */
export function addUrlForm(add: AddUrl, announce: (message: string) => void): HTMLFormElement {
  const input = h('input', {
    id: 'add-url',
    type: 'url',
    name: 'url',
    placeholder: 'https://example.com/file.iso',
    autocomplete: 'off',
    spellcheck: 'false',
    'data-testid': 'add-url-input',
    'aria-describedby': 'add-url-error',
  });
  const saveAs = h('input', { type: 'checkbox', name: 'saveAs', id: 'add-url-save-as' });
  const submit = h('button', { type: 'submit', class: 'primary', 'data-testid': 'add-url-submit' }, t('addUrlSubmit'));
  const error = h('p', { id: 'add-url-error', class: 'error-text form-error', role: 'alert' });

  const form = h(
    'form',
    // The background checks the URL and says what is wrong in plain words; no browser bubble.
    { class: 'add-url', novalidate: true, 'aria-label': t('addUrlForm') },
    h('label', { for: 'add-url', class: 'visually-hidden' }, t('addUrlLabel')),
    h('div', { class: 'add-url-row' }, input, submit),
    h('label', { class: 'check' }, saveAs, ` ${t('addUrlSaveAs')}`),
    error,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void addFromForm();
  });
  async function addFromForm(): Promise<void> {
    const url = input.value.trim();
    if (url === '') {
      showError(t('addUrlEmpty'));
      return input.focus();
    }
    submit.disabled = true;
    try {
      announce(await add(url, saveAs.checked));
      input.value = '';
      saveAs.checked = false;
      showError('');
      // Ready for the next one (a pressed Add button was disabled meanwhile, which drops focus).
      input.focus();
    } catch (problem) {
      showError(problem instanceof Error ? problem.message : String(problem));
      input.focus();
    } finally {
      submit.disabled = false;
    }
  }
  input.addEventListener('input', () => showError(''));

  function showError(message: string): void {
    error.textContent = message;
    error.hidden = message === '';
    if (message) input.setAttribute('aria-invalid', 'true');
    else input.removeAttribute('aria-invalid');
  }
  showError('');
  return form;
}
