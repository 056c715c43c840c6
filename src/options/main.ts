import { connectToBackground } from '../pages-shared/connection';
import { OptionsPage } from './options-page';

async function start(): Promise<void> {
  const root = document.getElementById('app') ?? document.body;
  const connection = await connectToBackground().catch(() => undefined);
  await new OptionsPage(root, { send: connection?.send }).load();
}

void start();
