import { connectToBackground } from '../pages-shared/connection';
import { localisePage } from '../words/i18n';
import { OptionsPage } from './options-page';

async function start(): Promise<void> {
  localisePage('optionsTitle');
  const root = document.getElementById('app') ?? document.body;
  const connection = await connectToBackground().catch(() => undefined);
  const page = new OptionsPage(root, { send: connection?.send });
  // Leaving with changes not saved asks first (the browser words the question).
  addEventListener('beforeunload', (event) => {
    if (page.hasUnsavedChanges) event.preventDefault();
  });
  await page.load();
}

void start();
