// Lets Node run the bench's TypeScript directly (Node 20 cannot strip types itself):
// `node --import ./bench/register.mjs bench/run.ts`. Types are stripped with Vite's Oxc transform;
// extensionless relative imports (`./content`) resolve to `.ts` files, as the bundler does.
import { register } from 'node:module';

register('./ts-hooks.mjs', import.meta.url);
