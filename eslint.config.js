// @ts-check
import js from '@eslint/js'
import reactHooks from 'eslint-plugin-react-hooks'
import globals from 'globals'
import tseslint from 'typescript-eslint'

/** Electron may only be imported by the shell: main/index.ts, main/ipc.ts and the preload. */
const noElectron = {
  'no-restricted-imports': [
    'error',
    {
      paths: [
        {
          name: 'electron',
          message:
            'Keep Electron out of the core: only src/main/index.ts, src/main/ipc.ts and src/preload may import it.',
        },
      ],
      patterns: [{ group: ['electron/*'], message: 'Keep Electron out of the core.' }],
    },
  ],
}

/** Electron's import paths, refused everywhere but the shell. */
const electronPaths = noElectron['no-restricted-imports'][1]

/**
 * The rooms of src/main: each domain imports only `lib/`, the shared contract and other
 * domains' `index.ts` (their public face), never a file inside another domain, and never the
 * composition root or the shell. `lib/` imports no domain at all.
 */
const domainBoundaries = {
  'no-restricted-imports': [
    'error',
    {
      paths: electronPaths.paths,
      patterns: [
        ...electronPaths.patterns,
        {
          regex: '^\\.\\./(?!lib/|\\.\\./)[^/]+/',
          message:
            'Import another domain through its index.ts (e.g. "../history"), never a file inside it.',
        },
        {
          regex: '^\\.\\./(core|dispatcher|index|ipc)$',
          message: 'Domains are composed by core.ts; they never import it or the shell.',
        },
      ],
    },
  ],
}
const libBoundaries = {
  'no-restricted-imports': [
    'error',
    {
      paths: electronPaths.paths,
      patterns: [
        ...electronPaths.patterns,
        {
          regex: '^\\.\\./(?!\\.\\./)',
          message: 'lib/ holds helpers every domain may use: it imports no domain.',
        },
      ],
    },
  ],
}
const DOMAINS =
  '{agent,app,conversations,history,hygiene,memory,memory-browser,review,settings,sync}'

/**
 * The memory handler, the history and the memory browser reach the file system through one
 * seam, src/main/lib/disk.ts, so that tests can fail any call of it (fault injection) or
 * change the folder between two calls (races). Types may still be imported from node:fs.
 */
const oneDiskSeam = {
  '@typescript-eslint/no-restricted-imports': [
    'error',
    {
      paths: ['fs', 'node:fs', 'fs/promises', 'node:fs/promises'].map((name) => ({
        name,
        allowTypeImports: true,
        message: 'Reach the file system through src/main/lib/disk.ts (the one seam).',
      })),
    },
  ],
}

/** The renderer and the shared contract never touch node. */
const noNode = {
  'no-restricted-imports': [
    'error',
    {
      paths: [{ name: 'electron', message: 'The renderer talks to main through window.api only.' }],
      patterns: [
        { group: ['node:*'], message: 'No node modules outside the main process.' },
        {
          group: ['fs', 'path', 'os', 'child_process', 'crypto', 'electron/*'],
          message: 'No node or electron modules outside the main process.',
        },
      ],
    },
  ],
}

export default tseslint.config(
  {
    ignores: [
      'node_modules',
      'out',
      'dist',
      'test-results',
      'playwright-report',
      'e2e/artifacts',
      'bench/results',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
    },
  },
  { files: ['src/main/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts'], rules: noElectron },
  {
    files: [`src/main/${DOMAINS}/**/*.ts`],
    ignores: ['**/*.test.ts', '**/test-helpers.ts', '**/test-support.ts'],
    rules: domainBoundaries,
  },
  { files: ['src/main/lib/**/*.ts'], ignores: ['**/*.test.ts'], rules: libBoundaries },
  {
    files: ['src/main/{memory,history,memory-browser,lib}/**/*.ts'],
    ignores: ['src/main/lib/disk.ts', '**/*.test.ts', '**/test-helpers.ts', '**/test-support.ts'],
    rules: oneDiskSeam,
  },
  { files: ['src/main/index.ts', 'src/main/ipc.ts'], rules: { 'no-restricted-imports': 'off' } },
  { files: ['src/shared/**/*.ts'], rules: noNode },
  // Playwright fixtures declare their dependencies with a (possibly empty) destructuring.
  { files: ['e2e/**/*.ts'], rules: { 'no-empty-pattern': 'off' } },
  {
    files: ['src/renderer/**/*.{ts,tsx}'],
    languageOptions: { globals: { ...globals.browser } },
    plugins: { 'react-hooks': reactHooks },
    rules: {
      ...reactHooks.configs.recommended.rules,
      ...noNode,
      // One way to reach main: `api()` from lib/api.ts.
      'no-restricted-properties': [
        'error',
        { object: 'window', property: 'api', message: 'Use api() from src/lib/api.ts.' },
      ],
    },
  },
  { files: ['src/renderer/src/lib/api.ts'], rules: { 'no-restricted-properties': 'off' } },
)
