// ESLint with typescript-eslint's type-aware rules; the packages live in tools/lint (see its package.json).
import { defineConfig, globals, js, tseslint } from './tools/lint/index.js';

export default defineConfig(
  { ignores: ['dist/', '.tmp/', 'test-results/', '**/node_modules/', 'bench/results/', 'tests/fixtures/'] },
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
    },
  },
  {
    // Plain JavaScript (scripts, the CLI launcher, this file) is outside the TypeScript project.
    files: ['**/*.{js,mjs,cjs}'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: globals.node },
  },
);
