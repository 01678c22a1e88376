import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// The tiers of src/ (docs/DESIGN.md): each folder may import only the folders it lists, static and
// dynamic imports alike, so the code keeps the shape the design gives it. Lower tiers first:
//   model → store, audit → core → adapters → protocol, brain, clients, wake, fleet, remote, render → client
//   → the surfaces (hooks, mcp, http, tui, init, cli) → runtime.ts, connect.ts → the entry points.
// The entry points (cli.ts, cli/commands/*, index.ts) may import anything; runtime.ts and connect.ts
// compose the program and are imported by the entry points alone. test/unit/architecture.test.ts fails
// on any folder-level cycle besides.
const LOWER = {
  model: [],
  store: ['model'],
  audit: ['model'],
  core: ['model', 'store', 'audit'],
  adapters: ['model', 'audit', 'core'],
  protocol: ['model', 'audit', 'core', 'brain'],
  brain: ['model', 'audit', 'core', 'adapters'],
  clients: ['model', 'core', 'adapters', 'protocol'],
  wake: ['model', 'audit', 'core', 'adapters', 'clients'],
  remote: ['model', 'audit', 'core', 'adapters', 'protocol'],
  // Spawned agents: the client's command line (clients/), the supervisor over the core's fleet.
  // A runner's supervisors reach the hub (remote/) with the protocol's calls.
  fleet: ['model', 'audit', 'core', 'adapters', 'clients', 'protocol', 'remote'],
  render: ['model', 'core'],
  client: ['model', 'audit', 'core', 'adapters', 'protocol', 'brain', 'clients', 'remote', 'render'],
  hooks: ['model', 'audit', 'core', 'adapters', 'protocol', 'brain', 'clients', 'wake', 'remote', 'render'],
  // The stdio server answers its client's hooks (mcp_tool) with the hooks' own logic.
  mcp: ['model', 'audit', 'core', 'adapters', 'protocol', 'brain', 'clients', 'fleet', 'hooks'],
  // The hub serves MCP and answers remote hooks and watchers: the one surface that uses two others.
  http: ['model', 'audit', 'core', 'adapters', 'protocol', 'brain', 'clients', 'wake', 'fleet', 'hooks', 'mcp'],
  tui: ['model', 'core', 'adapters', 'client', 'render'],
  init: ['model', 'core', 'adapters', 'clients'],
  // The CLI's shared modules (the commands themselves are entry points).
  cli: ['model', 'audit', 'core', 'adapters', 'protocol', 'brain', 'clients', 'wake', 'fleet', 'remote', 'render', 'client', 'hooks'],
};
const FOLDERS = [...Object.keys(LOWER), 'web'];
const COMPOSERS = ['runtime', 'connect'];
const folderPatterns = (folders) => folders.flatMap((folder) => [`**/${folder}/*`, `**/${folder}/**`, `../${folder}/*`, `./${folder}/*`]);
const importPath = (folders, files) => new RegExp(`(^|/)(${folders.join('|')})/|(^|/)(${files.join('|')})\\.js$`).source;

/** What a folder may not import: every folder not below it, the composers, and what `extra` adds. */
function tier(folder, extra = { patterns: [], packages: [], message: '' }) {
  const forbidden = FOLDERS.filter((other) => other !== folder && !LOWER[folder].includes(other));
  const message = `${folder}/ may import only ${LOWER[folder].join(', ') || 'Node.js itself'} of agent-bus: never ${forbidden.join(', ')}, runtime.ts or connect.ts. ${extra.message}`.trim();
  return {
    files: folder === 'cli' ? ['src/cli/*.ts'] : [`src/${folder}/**`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: extra.packages.map((name) => ({ name, message: `${folder}/ may not load ${name}. ${extra.message}`.trim() })),
          // A package's own folders (the MCP SDK's client/) are not agent-bus's: scoped packages are let through the folder patterns.
          patterns: [{ group: [...folderPatterns(forbidden), ...COMPOSERS.map((file) => `**/${file}.js`), '!@*/**', ...extra.patterns], message }],
        },
      ],
      // The same edges for dynamic import(): a module loaded on demand is still a dependency.
      'no-restricted-syntax': [
        'error',
        { selector: `ImportExpression > Literal[value=/${importPath(forbidden, COMPOSERS)}/]`, message: `a dynamic import: ${message}` },
        ...extra.packages.map((name) => ({ selector: `ImportExpression > Literal[value='${name}']`, message: `${folder}/ may not load ${name}` })),
      ],
    },
  };
}

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'bench/results.json', 'bench/results-node-*.json', 'clients/'] },
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
  ...Object.keys(LOWER)
    .filter((folder) => folder !== 'core' && folder !== 'store')
    .map((folder) => tier(folder)),
  // The store decides no rule: its engines and shared SQL import only the model and the store's own ports.
  tier('store', { patterns: [], packages: [], message: 'The store does data access and transactions only.' }),
  // The core knows no engine, no driver, no process and no protocol library: it talks to the store
  // through its ports and writes audit rows to a sink it is handed.
  tier('core', {
    patterns: ['**/store/sqlite/*', '**/store/postgres/*', '**/store/shared/*', '**/store/open.js', '**/audit/log.js', '@modelcontextprotocol/sdk/**'],
    packages: ['pg', 'better-sqlite3', 'node:child_process', 'child_process', '@modelcontextprotocol/sdk', 'zod'],
    message: 'The core reaches the store through store/ports.js and the audit log through its sink (core/audit-sink.ts).',
  }),
  // The composers: runtime.ts builds this machine's bus from the store, the audit log, the core and
  // the adapters (and what a send sets off, wake/); connect.ts chooses a command's client. Neither
  // imports a surface.
  ...[
    ['src/runtime.ts', ['model', 'store', 'audit', 'core', 'adapters', 'wake'], []],
    ['src/connect.ts', ['model', 'core', 'adapters', 'client'], ['runtime']],
  ].map(([file, lower, composers]) => {
    const forbidden = FOLDERS.filter((other) => !lower.includes(other));
    const message = `${file.slice(4)} composes ${lower.join(', ')}${composers.length > 0 ? ` and ${composers.join(', ')}.ts` : ''}; it imports no surface.`;
    return {
      files: [file],
      rules: {
        'no-restricted-imports': ['error', { patterns: [{ group: forbidden.flatMap((folder) => [`./${folder}/*`, `./${folder}/**`]), message }] }],
        'no-restricted-syntax': ['error', { selector: `ImportExpression > Literal[value=/^\\.\\/(${forbidden.join('|')})\\//]`, message }],
      },
    };
  }),
  {
    // The page runs in a browser: from the rest of agent-bus it takes types (erased by the build),
    // the one rule it shares with the server and the one way times and ids are written, never code that needs Node.js.
    files: ['src/web/**'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { patterns: [{ regex: '^\\.\\./(?!core/activity-filter\\.js$|model/when\\.js$|model/short-id\\.js$)', allowTypeImports: true, message: 'The page imports only types from the server side (and core/activity-filter.js, model/when.js, model/short-id.js).' }] },
      ],
    },
  },
);
