// ESLint with typescript-eslint's type-aware rules; the packages live in tools/lint (see its package.json).
import { defineConfig, globals, js, tseslint } from './tools/lint/index.js';
import { importZones } from './tools/lint/import-zones.js';

// The layout's folders, as the import zones below name them.
const pages = ['src/popup/', 'src/options/', 'src/player/'];
const browserOnly = ['src/background/', 'src/offscreen/'];

/**
 * One door (issue 47): every request Stitch makes leaves through a requester (src/background/network/requester.ts,
 * src/cli/requester.ts, or a job's own in src/engine/options.ts), which applies the trust rules hop by hop. Only the
 * platform's ports below may touch the network; nothing else may use a network API or import a raw port.
 */
const doorMessage = 'Requests go through the one door: requester() (src/background/network/requester.ts, src/cli/requester.ts).';
const networkGlobals = ['fetch', 'XMLHttpRequest', 'WebSocket', 'EventSource'].map((name) => ({ name, message: doorMessage }));
const networkProperties = [
  ...['globalThis', 'self', 'window'].flatMap((object) =>
    ['fetch', 'XMLHttpRequest', 'WebSocket', 'EventSource'].map((property) => ({ object, property, message: doorMessage })),
  ),
  { object: 'navigator', property: 'sendBeacon', message: doorMessage },
];
const networkModules = { regex: '^(node:)?(net|tls|http|https|http2|dgram)$|^undici$', message: doorMessage };
const rawPorts = { regex: '(/node-fetch|/http1-client|/host-connections|/network/redirect-log)$', message: doorMessage };
const networkSyntax = {
  selector: "CallExpression[callee.property.name='getBuiltinModule'][arguments.0.value=/^node:(net|tls|https?|http2|dgram)$/]",
  message: doorMessage,
};
/** The ports themselves, each with the one API it wraps, and the modules that compose the door from them. */
const networkPorts = [
  'src/background/network/redirect-log.ts', // the browser's fetch, its hidden redirect hops put back
  'src/background/jobs/host-connections.ts', // that fetch with connections shared per host
  'src/background/network/requester.ts',
  'src/cli/http1-client.ts', // node:net and node:tls, the address checked at connect
  'src/cli/node-fetch.ts',
  'src/cli/requester.ts',
  // The player page reads the stored file from the extension's own stream route, never the network.
  'src/player/hls/hls-route.ts',
];

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
    // The engine's one clock (issue 29): its time and timers come from the injected Clock, so that a test or a
    // simulated network can run it in virtual time. Only the real clock itself touches the platform's.
    files: ['src/engine/**/*.ts'],
    ignores: ['src/engine/clock.ts'],
    rules: {
      'no-restricted-globals': [
        'error',
        ...networkGlobals,
        ...['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'setImmediate', 'clearImmediate'].map((name) => ({
          name,
          message: 'Engine timers go through the injected Clock (options.clock.after).',
        })),
        ...['performance', 'requestAnimationFrame', 'requestIdleCallback'].map((name) => ({
          name,
          message: 'The engine reads the time from the injected Clock (options.clock.now).',
        })),
      ],
      'no-restricted-properties': [
        'error',
        ...networkProperties,
        { object: 'Date', property: 'now', message: 'The engine reads the time from the injected Clock (options.clock.now).' },
        ...['globalThis', 'self', 'window'].flatMap((object) =>
          ['setTimeout', 'setInterval', 'performance'].map((property) => ({
            object,
            property,
            message: 'Engine time and timers go through the injected Clock.',
          })),
        ),
      ],
      'no-restricted-syntax': [
        'error',
        networkSyntax,
        {
          selector: "NewExpression[callee.name='Date'][arguments.length=0]",
          message: 'new Date() reads the time: use the injected Clock.',
        },
        { selector: "CallExpression[callee.name='Date']", message: 'Date() reads the time: use the injected Clock.' },
        {
          // `Date` itself handed on as a clock (it has a now()); Date.UTC, new Date(t) and the type stay allowed.
          selector:
            "Identifier[name='Date']:not(MemberExpression > .object, NewExpression > .callee, CallExpression > .callee, TSTypeReference > .typeName)",
          message: 'Date is not a clock: use the injected Clock.',
        },
      ],
    },
  },
  {
    // The architecture as lint rules (issue 29): who may import whom, by folder.
    files: ['src/**/*.ts'],
    plugins: { stitch: { rules: { 'import-zones': importZones } } },
    rules: {
      'stitch/import-zones': [
        'error',
        {
          root: import.meta.dirname,
          zones: [
            {
              from: ['src/engine/'],
              only: ['src/engine/'],
              message: 'the engine is platform-free and imports nothing outside src/engine/.',
            },
            {
              from: ['src/engine/http/'],
              forbid: ['src/engine/scheduler/'],
              message: 'HTTP sits below the scheduler: put what both need in engine/http/ or a shared engine module.',
            },
            ...pages.map((page) => ({
              from: [page],
              forbid: [...browserOnly, 'src/cli/', ...pages.filter((other) => other !== page)],
              message: 'a page talks to the background through messages only; code pages share lives in src/pages-shared/.',
            })),
            {
              from: ['src/background/'],
              forbid: [...pages, 'src/pages-shared/'],
              message: "the background imports no page code; the extension's words live in src/words/.",
            },
            {
              from: ['src/cli/'],
              forbid: [...browserOnly, ...pages, 'src/pages-shared/'],
              message: 'the command line runs in Node: it imports the engine, storage and words, no browser code.',
            },
          ],
        },
      ],
    },
  },
  {
    // Platform-free: no Node or browser API reaches the engine through a package either.
    files: ['src/engine/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ regex: '^(node:|webextension-polyfill$)', message: 'The engine is platform-free.' }, rawPorts] },
      ],
    },
  },
  {
    // The one door outside the engine (the engine's block above carries the same network rules with its clock's).
    files: ['src/**/*.ts'],
    ignores: ['src/engine/**', ...networkPorts],
    rules: {
      'no-restricted-globals': ['error', ...networkGlobals],
      'no-restricted-properties': ['error', ...networkProperties],
      'no-restricted-syntax': ['error', networkSyntax],
      'no-restricted-imports': ['error', { patterns: [networkModules, rawPorts] }],
    },
  },
  {
    // aria2's RPC over a WebSocket (the user's own endpoint; a WebSocket follows no redirect): its HTTP calls use the door.
    files: ['src/background/aria2/rpc.ts'],
    rules: { 'no-restricted-globals': ['error', ...networkGlobals.filter(({ name }) => name !== 'WebSocket')] },
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
