// @ts-check
import { readdirSync } from 'node:fs'
import path from 'node:path'
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

/**
 * The rooms of src/main: each domain imports only `lib/`, the shared contract and other
 * domains' `index.ts` (their public face), never a file inside another domain, and never the
 * composition root or the shell. `lib/` imports no domain at all. The rooms are the folders
 * of src/main, read here (a new one is a room at once), and each import is resolved against
 * the file that writes it, whatever its spelling (`../../history/repo.js`, a detour through
 * `../../main/`): review hunt13 D7 walked past a rule that matched the spelling alone.
 */
const MAIN = path.resolve(import.meta.dirname, 'src/main')
const ROOMS = readdirSync(MAIN, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort()

/** `src/main/history/repo.ts` -> `{ room: 'history', rest: 'repo' }`; null outside src/main. */
function placeOf(file) {
  const relative = path.relative(MAIN, file)
  if (relative.startsWith('..') || path.isAbsolute(relative)) return null
  const parts = relative.split(path.sep)
  // `../history` names the folder: the room's index.ts.
  if (parts.length === 1 && ROOMS.includes(parts[0])) return { room: parts[0], rest: '' }
  if (parts.length === 1) return { room: null, rest: parts[0].replace(/\.(?:[cm]?[jt]sx?)$/, '') }
  return {
    room: parts[0],
    rest: parts
      .slice(1)
      .join('/')
      .replace(/\.(?:[cm]?[jt]sx?)$/, ''),
  }
}

/** Why `specifier`, imported by `filename`, breaks the rooms (null when it does not). */
function roomsBroken(filename, specifier) {
  if (typeof specifier !== 'string' || !specifier.startsWith('.')) return null
  const from = placeOf(filename)
  if (!from || from.room === null) return null
  const target = path.resolve(path.dirname(filename), specifier.replace(/[?#].*$/, ''))
  const to = placeOf(target)
  if (!to) {
    const src = path.dirname(MAIN)
    const inSrc = path.relative(src, target)
    return !inSrc.startsWith('..') && !inSrc.startsWith(`shared${path.sep}`) && inSrc !== 'shared'
      ? 'src/main imports only itself and src/shared.'
      : null
  }
  if (to.room === null) return 'Domains are composed by core.ts; they never import it or the shell.'
  if (to.room === from.room) return null
  if (from.room === 'lib') return 'lib/ holds helpers every domain may use: it imports no domain.'
  if (to.room === 'lib') return null
  if (to.rest === '' || to.rest === 'index') return null
  return 'Import another domain through its index.ts (e.g. "../history"), never a file inside it.'
}

/** The rule: every import, export-from and import() of a src/main file checked as above. */
const cairnPlugin = {
  rules: {
    rooms: {
      meta: { type: 'problem', schema: [] },
      create(context) {
        const check = (node, source) => {
          if (!source || source.type !== 'Literal') return
          const message = roomsBroken(context.filename, source.value)
          if (message) context.report({ node: source, message })
        }
        return {
          ImportDeclaration: (node) => check(node, node.source),
          ExportNamedDeclaration: (node) => check(node, node.source),
          ExportAllDeclaration: (node) => check(node, node.source),
          ImportExpression: (node) => check(node, node.source),
          TSImportType: (node) => check(node, node.argument?.literal ?? node.argument),
        }
      },
    },
  },
}

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
    files: ['src/main/*/**/*.ts'],
    ignores: ['**/*.test.ts', '**/test-helpers.ts', '**/test-support.ts'],
    plugins: { cairn: cairnPlugin },
    rules: { 'cairn/rooms': 'error' },
  },
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
