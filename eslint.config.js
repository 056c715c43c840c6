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
      // `async` without `await` is how fakes and adapters implement an async interface (a throw becomes a rejection).
      '@typescript-eslint/require-await': 'off',
      // Abort reasons (typed `any` by the DOM) and caught errors (`unknown`) are passed on as they are.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingAny: true, allowThrowingUnknown: true }],
    },
  },
  {
    files: ['tests/**'],
    // Vitest types its asymmetric matchers (expect.any, expect.stringMatching) as `any`.
    rules: { '@typescript-eslint/no-unsafe-assignment': 'off' },
  },
  {
    // Plain JavaScript (scripts, test helpers, this file) is outside the TypeScript project.
    files: ['**/*.{js,mjs,cjs}'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: globals.node },
  },
  {
    // CommonJS (a preload run with `node --require`) loads modules with require().
    files: ['**/*.cjs'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
