// Imported by eslint.config.js through here so that typescript-eslint and its helpers resolve
// `typescript` to this folder's TypeScript 6 (see package.json), not the project's TypeScript 7.
export { default as js } from '@eslint/js';
export { defineConfig } from 'eslint/config';
export { default as globals } from 'globals';
export { default as tseslint } from 'typescript-eslint';
