import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// The layers (../shared DESIGN): surfaces → core → store, with model below all of them.
// A surface reaches the store only through the core; the store decides no rule and
// imports nothing above it; the core knows no engine and no surface.
const SURFACES = ['cli', 'mcp', 'hooks', 'tui', 'wake', 'brain', 'clients', 'init', 'render', 'sessions', 'http', 'remote', 'web'];
const anyOf = (folders) => folders.flatMap((folder) => [`**/${folder}/*`, `**/${folder}/**`]);
const layer = (files, forbidden, message) => ({
  files,
  rules: { 'no-restricted-imports': ['error', { patterns: [{ group: forbidden, message }] }] },
});

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'bench/results.json', 'clients/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', URL: 'readonly' },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  layer(['src/model/**'], ['../*'], 'model/ is the shared vocabulary: it imports nothing of agent-bus above it.'),
  layer(['src/store/**'], [...anyOf(['core', 'audit', ...SURFACES]), '**/runtime.js'], 'The store does data access and transactions only: it imports model/ and nothing above it.'),
  layer(['src/audit/**'], [...anyOf(['core', 'store', ...SURFACES]), '**/runtime.js'], 'The audit log sits below the core: it imports model/ only.'),
  layer(
    ['src/core/**'],
    [...anyOf(['store/sqlite', 'store/postgres', ...SURFACES]), '**/store/open.js', '**/runtime.js'],
    'The core knows no engine and no surface: it talks to the store through its ports (store/ports.js).',
  ),
  {
    // The page runs in a browser: from the rest of agent-bus it takes types (erased by the build) and
    // the one rule it shares with the server, never code that needs Node.js.
    files: ['src/web/**'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { patterns: [{ regex: '^\\.\\./(?!core/activity-filter\\.js$)', allowTypeImports: true, message: 'The page imports only types from the server side (and core/activity-filter.js).' }] },
      ],
    },
  },
  layer(
    SURFACES.map((folder) => `src/${folder}/**`),
    anyOf(['store']),
    'Surfaces reach the store only through the core (openBus in runtime.js, then the Bus and its services).',
  ),
);
