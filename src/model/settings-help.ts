/**
 * What each setting is for, as the configuration reference (docs/configuration.md) says it: who reads
 * it and what it means, by topic. Apart from settings.ts so that the hooks, which load the settings at
 * every turn, never load this text. A meaning names a default as `{NAME}` (a minimum as `{NAME.min}`),
 * filled in from the registry, so the reference cannot state a default the code does not use.
 * `npm run docs:settings` writes the reference's tables; test/unit/settings.test.ts holds them equal.
 */
import { durationText } from './duration.js';
import { SETTINGS, settingDefault, WAKE_COMMAND_VARIABLES, type SettingName } from './settings.js';

/** A setting, or a setting and the one read in its place when it is unset (`A (or B)`). */
type Named = SettingName | readonly [SettingName, SettingName];

/** The reference's topics, in its order: a heading and where the topic is explained. */
export const SETTING_SECTIONS = {
  identity: { title: 'Names and sessions', about: "How a session's name and address are worked out: [Clients](clients.md#the-mcp-server)." },
  store: { title: 'The store and its files', about: 'Where the bus keeps its data: [Operations](operations.md#where-data-lives), [the hub and PostgreSQL](hub.md#choosing-an-engine).' },
  mail: { title: 'Mail', about: 'Sending and reading: [Addressing and mail](mail.md).' },
  hooks: { title: 'Hooks', about: 'What runs at turn boundaries: [Clients](clients.md#hooks).' },
  notices: { title: 'Notices and subscriptions', about: 'Channels, severities and the four layers of subscriptions: [Channels](channels-and-brain.md#notices-channels-severity-and-ttl).' },
  brain: { title: 'The brain', about: "The brain's source and its writer: [The brain](channels-and-brain.md#the-brain-adapter)." },
  wake: { title: 'Waking idle agents', about: 'Native wake and the watcher: [Clients](clients.md#waking-idle-agents).' },
  coordination: { title: 'Reservations and the commit guard', about: 'Holding files: [Reservations](coordination.md#reservations-and-collisions).' },
  hub: { title: 'The hub and other machines', about: 'Agents on other machines: [The hub](hub.md#the-hub-agents-on-other-machines).' },
  cli: { title: 'init and the command line', about: 'Wiring repos and the CLI itself: [Commands](commands.md).' },
  fleet: { title: 'The fleet', about: 'Agents the bus starts and watches: [The fleet](fleet.md).' },
} as const;

export type SettingSection = keyof typeof SETTING_SECTIONS;

export interface SettingHelp {
  /** The settings of one row: several when they go together. */
  readonly names: readonly Named[];
  readonly section: SettingSection;
  readonly usedBy: string;
  readonly meaning: string;
}

/** The reference's rows; within a topic, in its order. */
export const SETTING_HELP = [
  { names: ['AGENT_BUS_NAME'], section: 'identity', usedBy: 'server, hooks, CLI', meaning: "the agent's full name; wins over everything else (the CLI defaults to `human`, the person `init` puts on the roster). Over a hub it goes with each request as `X-Agent-Bus-Name`: a session address of the token's client address is the name the session holds there" },
  { names: ['AGENT_BUS_REPO'], section: 'identity', usedBy: 'server, hooks, CLI', meaning: 'the folder of the repo this agent works in; default: the git top level of the folder it runs in' },
  {
    names: ['AGENT_BUS_CLIENT'],
    section: 'identity',
    usedBy: 'server, hooks, guard',
    meaning:
      "client id, same as `--client`: derives `<repo>/<client>` when `AGENT_BUS_NAME` is unset; the commit guard reads it to tell which agent commits (opencode's plugin sets it for its shell tool)",
  },
  { names: ['AGENT_BUS_SESSION'], section: 'identity', usedBy: 'server', meaning: 'a label this session asks for: it becomes `<repo>/<client>-<label>`' },
  { names: ['AGENT_BUS_INSTANCE'], section: 'identity', usedBy: 'server', meaning: '1..99: the session number this session asks for' },
  { names: ['AGENT_BUS_SESSIONS'], section: 'identity', usedBy: 'server', meaning: '`0` turns session addresses off: every session of a client shares `<repo>/<client>`' },
  {
    names: ['AGENT_BUS_SESSION_RESUME_HOURS'],
    section: 'identity',
    usedBy: 'server',
    meaning: "how long an ended session's address stays reserved for its comeback; default {AGENT_BUS_SESSION_RESUME_HOURS}, 0 disables",
  },
  { names: ['AGENT_BUS_PROCESS_LOOKUP_TIMEOUT'], section: 'identity', usedBy: 'server', meaning: 'seconds to wait for `ps` where there is no `/proc`; default {AGENT_BUS_PROCESS_LOOKUP_TIMEOUT}' },
  {
    names: ['CLAUDE_CODE_SESSION_ID'],
    section: 'identity',
    usedBy: 'server, hooks',
    meaning: 'set by Claude Code: tells its sessions apart and lets a resumed conversation keep its address',
  },
  { names: ['AGENT_BUS_DB'], section: 'store', usedBy: 'everything', meaning: 'the store: a SQLite file (default `bus.db` in the bus folder) or a `postgres://` URL' },
  {
    names: ['AGENT_BUS_HOME'],
    section: 'store',
    usedBy: 'everything',
    meaning: 'the bus folder: `wake.json`, `brain-feed/`, `.env`, `chat_history` (default `~/.claude-agent-bus`; for a SQLite `AGENT_BUS_DB`, its folder)',
  },
  {
    names: ['AGENT_BUS_PG_CONNECT_TIMEOUT'],
    section: 'store',
    usedBy: 'everything',
    meaning: 'seconds a connect to PostgreSQL may take before the command fails (a hook: stays silent); default {AGENT_BUS_PG_CONNECT_TIMEOUT}',
  },
  {
    names: ['AGENT_BUS_BUSY_TIMEOUT'],
    section: 'store',
    usedBy: 'everything (SQLite)',
    meaning: "seconds a writer waits for another process's lock before it gives up and says so; default {AGENT_BUS_BUSY_TIMEOUT}",
  },
  {
    names: ['AGENT_BUS_SQLITE_DRIVER'],
    section: 'store',
    usedBy: 'everything (SQLite)',
    meaning: '`builtin` (Node.js\'s own `node:sqlite`, 22.13 and later) or `better-sqlite3` (the compiled addon); default {AGENT_BUS_SQLITE_DRIVER}: the built-in one wherever this Node.js has it',
  },
  { names: ['AGENT_BUS_AUDIT_LOG'], section: 'store', usedBy: 'everything', meaning: 'audit log path (default `~/.claude-agent-bus/audit.log`)' },
  {
    names: ['AGENT_BUS_AUDIT_MAX_BYTES'],
    section: 'store',
    usedBy: 'everything',
    meaning: 'rotate the audit log to `audit.log.1`, `.2` … before it grows past this size (bytes, or with `K`, `M`, `G`); unset: never',
  },
  {
    names: ['AGENT_BUS_RETENTION_DAYS'],
    section: 'store',
    usedBy: 'MCP servers, hub, prune',
    meaning: "prune read mail older than this many days automatically, at most once a day; unset: off (also `prune`'s default `--older-than`)",
  },
  {
    names: ['AGENT_BUS_FANOUT_MAX_IDLE_DAYS'],
    section: 'mail',
    usedBy: 'senders',
    meaning: 'skip clients idle this many days in repo-wide and `*` sends when a fresher repo-mate exists; default {AGENT_BUS_FANOUT_MAX_IDLE_DAYS}, 0 disables',
  },
  { names: ['AGENT_BUS_MAX_BODY_BYTES'], section: 'mail', usedBy: 'senders', meaning: 'largest body accepted, in UTF-8 bytes; default {AGENT_BUS_MAX_BODY_BYTES}' },
  {
    names: ['AGENT_BUS_MIDTURN'],
    section: 'mail',
    usedBy: 'hooks',
    meaning:
      "which mail a busy agent is shown between its tool calls, through its pre-tool hook: `urgent` (`send --urgent`, task results, collision alerts; the default {AGENT_BUS_MIDTURN}), `all`, or `off` (all mail waits for the turn's end)",
  },
  {
    names: ['AGENT_BUS_HOOK_PAYLOAD_TIMEOUT'],
    section: 'hooks',
    usedBy: 'hooks',
    meaning: 'seconds a hook waits for its payload on stdin before going on without it; default {AGENT_BUS_HOOK_PAYLOAD_TIMEOUT}',
  },
  {
    names: ['AGENT_BUS_HOOK_TIMEOUT_MS'],
    section: 'hooks',
    usedBy: 'opencode plugin, remote hooks',
    meaning:
      'milliseconds the plugin waits for a hook before the model request goes ahead (default 10000); a remote hook waits for the hub at most this long (default {AGENT_BUS_HOOK_TIMEOUT_MS})',
  },
  {
    names: ['AGENT_BUS_STOP_KEEPS'],
    section: 'hooks',
    usedBy: 'hooks',
    meaning:
      'most turns in a row the stop hook starts for mail where the client leaves the count to it (Gemini CLI); past it the turn ends and the mail waits for the next prompt; default {AGENT_BUS_STOP_KEEPS}, 0 = no limit',
  },
  {
    names: ['AGENT_BUS_CHANNELS'],
    section: 'notices',
    usedBy: 'hooks, statusline',
    meaning: 'the notice channels this session receives, set at launch: wins over every settings layer (comma-separated; `*` for all; empty: global notices only)',
  },
  { names: ['AGENTIHOOKS_BASE_CHANNELS'], section: 'notices', usedBy: 'hooks, statusline', meaning: "AgentiHooks' name for `AGENT_BUS_CHANNELS`, read when that is unset" },
  {
    names: ['AGENT_BUS_DEFAULT_CHANNELS'],
    section: 'notices',
    usedBy: 'hooks, statusline',
    meaning: "the subscriptions of the settings layers (what init writes per repo; yours in the bus's `.env`), used when no launch value is set",
  },
  { names: ['AGENT_BUS_NOTICES_PER_TURN'], section: 'notices', usedBy: 'hooks', meaning: 'most notices one hook output shows; default {AGENT_BUS_NOTICES_PER_TURN}' },
  {
    names: ['AGENT_BUS_NOTICE_MAX_BYTES'],
    section: 'notices',
    usedBy: 'hooks',
    meaning: 'most bytes one hook output fills with notices, counting the mail printed before them; default {AGENT_BUS_NOTICE_MAX_BYTES}, at least {AGENT_BUS_NOTICE_MAX_BYTES.min}',
  },
  {
    names: ['AGENT_BUS_CHANNEL_MAX_NOTICES'],
    section: 'notices',
    usedBy: 'publishers',
    meaning: 'most live notices a channel (or the global notices) keeps; default {AGENT_BUS_CHANNEL_MAX_NOTICES} (also for 0 or less)',
  },
  {
    names: ['BRAIN_URL', ['BRAIN_HTTP_TOKEN', 'KB_ROUTER_TOKEN'], 'BRAIN_HTTP_TIMEOUT'],
    section: 'brain',
    usedBy: 'brain',
    meaning: "the HTTP feed, its bearer token (`KB_ROUTER_TOKEN`: AgentiHooks' name for it), seconds to wait ({BRAIN_HTTP_TIMEOUT})",
  },
  {
    names: ['BRAIN_SOURCE_TYPE', 'BRAIN_SOURCE_PATH'],
    section: 'brain',
    usedBy: 'brain',
    meaning: '`{BRAIN_SOURCE_TYPE}` and the folder of markdown entries (default `brain-feed` in the bus folder), when `BRAIN_URL` is unset',
  },
  { names: ['BRAIN_ENABLED', 'BRAIN_WRITER_ENABLED'], section: 'brain', usedBy: 'brain', meaning: 'on or off; default on when `BRAIN_URL` is set or the folder has markdown' },
  { names: ['BRAIN_CHANNEL'], section: 'brain', usedBy: 'brain', meaning: 'the channel the brain publishes to; default `{BRAIN_CHANNEL}` (sessions must subscribe to it)' },
  {
    names: ['BRAIN_HOT_ARCS_TOP_N', 'BRAIN_PAYLOAD_MAX_BYTES', 'BRAIN_REFRESH_TOOL_CALLS'],
    section: 'brain',
    usedBy: 'brain',
    meaning: 'rows kept of a hot-arcs table ({BRAIN_HOT_ARCS_TOP_N}), characters per entry ({BRAIN_PAYLOAD_MAX_BYTES}), tool calls between reads ({BRAIN_REFRESH_TOOL_CALLS})',
  },
  { names: ['AGENT_BUS_NATIVE_WAKE'], section: 'wake', usedBy: 'init, hook-watch, senders', meaning: '`0` turns native wake off' },
  { names: ['AGENT_BUS_WAKES_PER_HOUR'], section: 'wake', usedBy: 'hook-watch, senders', meaning: 'most wakes of one agent in an hour; default {AGENT_BUS_WAKES_PER_HOUR}, 0 = no limit' },
  {
    names: ['AGENT_BUS_WATCH_POLL_SECONDS', 'AGENT_BUS_WATCH_HOURS'],
    section: 'wake',
    usedBy: 'hook-watch, init, the outbox',
    meaning: 'the fallback poll ({AGENT_BUS_WATCH_POLL_SECONDS} s) / when a watcher gives up ({AGENT_BUS_WATCH_HOURS} h, written by init as `--max-seconds`)',
  },
  {
    names: ['AGENT_BUS_WATCH_CLIENT_PID'],
    section: 'wake',
    usedBy: 'hook-watch',
    meaning: "the client process a watcher waits for, set by the opencode plugin to its own: a watcher whose named client is no longer among its ancestors (it quit before the watcher looked) exits at once",
  },
  {
    names: ['AGENT_BUS_SOCKET_TURN_SECONDS'],
    section: 'wake',
    usedBy: 'serve',
    meaning: "how long after a nudge posted into Claude Code's inbox socket a turn must begin before the socket is given up for the watcher; default {AGENT_BUS_SOCKET_TURN_SECONDS}",
  },
  {
    names: ['AGENT_BUS_CODEX_BIN'],
    section: 'wake',
    usedBy: 'senders, init, spawn',
    meaning: "the Codex executable that queues a turn (default: the one the session's hooks recorded), the one init asks for its version and the one spawn starts (default `codex`)",
  },
  {
    names: ['AGENT_BUS_RESERVATIONS'],
    section: 'coordination',
    usedBy: 'hooks, guard',
    meaning: "what an agent's write of a file another holds meets at its pre-tool hook: `deny` (refused; the default {AGENT_BUS_RESERVATIONS}), `warn` (the model is told), `off`",
  },
  { names: ['AGENT_BUS_RESERVATION_TTL'], section: 'coordination', usedBy: 'server, CLI, hub', meaning: 'how long a reservation holds when none is asked for; default {AGENT_BUS_RESERVATION_TTL}, at most 24h' },
  {
    names: ['AGENT_BUS_COLLISION_WINDOW'],
    section: 'coordination',
    usedBy: 'hooks',
    meaning: "how close two agents' writes of one file must be to count as a collision; default {AGENT_BUS_COLLISION_WINDOW}",
  },
  {
    names: ['AGENT_BUS_GUARD'],
    section: 'coordination',
    usedBy: 'guard',
    meaning: '`off` lets a commit through the commit guard (`agent-bus guard install`) unchecked, as `git commit --no-verify` does; default {AGENT_BUS_GUARD}',
  },
  {
    names: ['AGENT_BUS_URL', 'AGENT_BUS_TOKEN'],
    section: 'hub',
    usedBy: 'CLI, hooks, hook-watch, serve',
    meaning:
      'the hub to talk to and the token to show it; with a URL set, no local bus is opened and `serve` relays to the hub (see [the other machine](hub.md#the-other-machine-the-cli-and-hooks-over-the-hub)); `init --remote` writes the URL into the committed files, never the token',
  },
  {
    names: ['AGENT_BUS_HTTP_RATE'],
    section: 'hub',
    usedBy: 'hub',
    meaning: 'requests a second one token may make; more get 429 with `Retry-After`; default {AGENT_BUS_HTTP_RATE}',
  },
  { names: ['AGENT_BUS_HTTP_CONCURRENCY'], section: 'hub', usedBy: 'hub', meaning: 'requests the hub handles at once (the rest wait their turn); default {AGENT_BUS_HTTP_CONCURRENCY}' },
  {
    names: ['AGENT_BUS_HTTP_WAITS'],
    section: 'hub',
    usedBy: 'hub',
    meaning:
      'requests waiting for the bus to move at once (remote watchers, `tail -f`, chats), apart from the {AGENT_BUS_HTTP_CONCURRENCY}; past it, 503; default {AGENT_BUS_HTTP_WAITS}',
  },
  {
    names: ['AGENT_BUS_HTTP_ORIGINS'],
    section: 'hub',
    usedBy: 'hub',
    meaning: "comma-separated browser origins allowed besides the hub's own; a request from any other `Origin` gets 403",
  },
  { names: ['AGENT_BUS_HUB_NAME'], section: 'hub', usedBy: 'hub', meaning: 'how audit rows name this hub; default `<hostname>:<port>`' },
  {
    names: ['AGENT_BUS_HUB_SESSION_IDLE_MINUTES'],
    section: 'hub',
    usedBy: 'hub, and commands on its machine',
    meaning: 'how long a session held over the hub may go unheard before it counts as ended; default {AGENT_BUS_HUB_SESSION_IDLE_MINUTES}',
  },
  { names: ['AGENT_BUS_PG_POOL'], section: 'hub', usedBy: 'hub', meaning: 'PostgreSQL connections a hub holds at most; default {AGENT_BUS_PG_POOL}' },
  {
    names: ['AGENT_BUS_BIN'],
    section: 'cli',
    usedBy: "init, guard install, Claude Code's hooks and server",
    meaning:
      "this machine's agent-bus, as a path (same as `--bin-path`): init writes it into Claude Code's personal, git-ignored `.claude/settings.local.json`, whose `env` hands it to the hooks and the MCP server, and the commands init committed run it where it is set (`agent-bus` from `PATH` elsewhere); `guard install` writes it into the git hook. A bare name (no `/`) is the command the committed files run",
  },
  {
    names: ['AGENT_BUS_CLAUDE_BIN', 'AGENT_BUS_CLIENT_VERSION_TIMEOUT'],
    section: 'cli',
    usedBy: 'init, spawn',
    meaning: 'the Claude Code asked for its version and started by spawn (default `{AGENT_BUS_CLAUDE_BIN}`) / seconds to wait for its version ({AGENT_BUS_CLIENT_VERSION_TIMEOUT})',
  },
  {
    names: ['AGENT_BUS_OPENCODE_BIN', 'AGENT_BUS_GEMINI_BIN', 'AGENT_BUS_COPILOT_BIN', 'AGENT_BUS_PI_BIN', 'AGENT_BUS_QWEN_BIN', 'AGENT_BUS_CLINE_BIN'],
    section: 'fleet',
    usedBy: 'spawn, init, doctor',
    meaning: 'the executable spawn starts for opencode, Gemini CLI, Copilot CLI, Pi, Qwen Code and Cline CLI, and the opencode init and doctor ask for its version (default `opencode`, `gemini`, `copilot`, `pi`, `qwen`, `cline` on PATH; Claude Code and Codex: AGENT_BUS_CLAUDE_BIN, AGENT_BUS_CODEX_BIN)',
  },
  { names: ['AGENT_BUS_MAX_SPAWNED'], section: 'fleet', usedBy: 'spawn', meaning: 'how many spawned agents run at once on a machine; more wait in a queue (default {AGENT_BUS_MAX_SPAWNED})' },
  {
    names: ['AGENT_BUS_MAX_SPAWN_DEPTH', 'AGENT_BUS_SPAWN_DEPTH'],
    section: 'fleet',
    usedBy: 'spawn',
    meaning: 'how deep spawned agents may spawn others (default {AGENT_BUS_MAX_SPAWN_DEPTH}: a person spawns an agent, which may spawn one more) / set by the bus in each agent it starts: its own depth',
  },
  { names: ['AGENT_BUS_STOP_GRACE'], section: 'fleet', usedBy: 'stop', meaning: 'how long `stop` waits after its polite signal before it kills (default {AGENT_BUS_STOP_GRACE})' },
  {
    names: ['AGENT_BUS_RUNNER_HEARTBEAT'],
    section: 'fleet',
    usedBy: 'runner',
    meaning: 'how often a runner offers its machine to the hub again (default {AGENT_BUS_RUNNER_HEARTBEAT}); unheard for three of them, it is away and its agents are unknown',
  },
  { names: ['AGENT_BUS_CHAT_FORCE'], section: 'cli', usedBy: 'chat', meaning: 'run `agent-bus chat` even when standard input is not a terminal (scripts, benchmarks)' },
  { names: ['NO_COLOR'], section: 'cli', usedBy: 'CLI', meaning: 'any value turns colour off' },
  { names: ['AGENT_BUS_DEBUG'], section: 'cli', usedBy: 'CLI', meaning: 'print a stack trace with unexpected errors' },
  {
    names: ['AGENT_BUS_BUILD_CODE_CACHE'],
    section: 'cli',
    usedBy: 'build',
    meaning: "set by `npm run build` while it records the code caches (`1`: a command's, `engine`: the PostgreSQL engine's, `launcher`: the launcher's); not for use otherwise",
  },
] as const satisfies readonly SettingHelp[];

type Each<T> = T extends readonly [infer First, infer Second] ? First | Second : T;
type Helped = Each<(typeof SETTING_HELP)[number]['names'][number]>;
// A setting with no row is a type error here, naming it.
const _everySettingHasHelp: Record<Exclude<SettingName, Helped>, never> = {};

/** The settings a row names, each once. */
export function rowSettings(row: SettingHelp): SettingName[] {
  return row.names.flatMap((named) => (typeof named === 'string' ? [named] : [...named]));
}

/** A meaning with its `{NAME}` and `{NAME.min}` filled in from the registry. */
export function fillMeaning(meaning: string): string {
  return meaning.replace(/\{([A-Z][A-Z0-9_]*)(\.min)?\}/g, (placeholder, name: string, min: string | undefined) => {
    if (!Object.hasOwn(SETTINGS, name)) throw new Error(`${placeholder}: no such setting`);
    const spec = SETTINGS[name as SettingName];
    const value = min ? ('min' in spec ? spec.min : undefined) : settingDefault(name as SettingName);
    if (typeof value !== 'number' && (typeof value !== 'string' || value === '')) throw new Error(`${placeholder}: the setting has no such value to show`);
    return spec.kind === 'duration' && !min ? durationText(value as number) : String(value);
  });
}

/** A topic's table of settings, as markdown. */
function sectionTable(section: SettingSection): string {
  const variable = (named: Named): string => (typeof named === 'string' ? `\`${named}\`` : `\`${named[0]}\` (or \`${named[1]}\`)`);
  const rows = (SETTING_HELP as readonly SettingHelp[])
    .filter((row) => row.section === section)
    .map((row) => `| ${row.names.map(variable).join(' / ')} | ${row.usedBy} | ${fillMeaning(row.meaning)} |`);
  return ['| variable | used by | meaning |', '|---|---|---|', ...rows].join('\n');
}

/** Every setting, a heading and a table per topic, as markdown. */
function settingsTables(): string {
  return (Object.keys(SETTING_SECTIONS) as SettingSection[])
    .map((section) => `### ${SETTING_SECTIONS[section].title}\n\n${SETTING_SECTIONS[section].about}\n\n${sectionTable(section)}`)
    .join('\n\n');
}

/** What each variable agent-bus gives a wake command (wake/fire.ts) holds. */
export const WAKE_COMMAND_HELP: Record<(typeof WAKE_COMMAND_VARIABLES)[number], string> = {
  AGENT_BUS_FROM: 'who sent the mail',
  AGENT_BUS_TO: 'the recipient whose wake command this is',
  AGENT_BUS_THREAD_ID: "the mail's thread id",
  AGENT_BUS_MESSAGE_ID: "the recipient's copy's message id",
  AGENT_BUS_BODY_PREVIEW: 'the first 200 characters of the body: untrusted text, so quote it (`"$AGENT_BUS_BODY_PREVIEW"`)',
};

/**
 * The variables the test suite, the benchmarks and the development scripts read: none of them a
 * setting of the product. test/unit/docs-words.test.ts checks that each is read somewhere.
 */
export const DEVELOPMENT_VARIABLES = {
  AGENT_BUS_TEST_PG_URL: "a PostgreSQL server for the suite's PostgreSQL pass, as a URL whose role may create databases, instead of the throwaway server `npm test` starts",
  AGENT_BUS_TEST_PG_BIN: "the folder holding that server's `psql` (set by `scripts/run-tests.mjs`)",
  AGENT_BUS_PG_BIN: "the folder holding `initdb`, `pg_ctl` and `psql` for the throwaway server (default: Debian's newest PostgreSQL, else the `PATH`'s)",
  AGENT_BUS_TEST_ENGINE: 'set by `scripts/run-tests.mjs` for each pass: `postgres` runs the buses of the end-to-end suites on PostgreSQL, anything else on SQLite',
  AGENT_BUS_TEST_ENGINES: '`sqlite` leaves out the second pass, on PostgreSQL',
  AGENT_BUS_TEST_CONCURRENCY: 'how many test files each pass runs at once (default 2)',
  AGENT_BUS_TEST_SIDE_BY_SIDE: '`0` runs the PostgreSQL pass after the SQLite pass instead of beside it',
  AGENT_BUS_TEST_SEED: 'the seed a reliability test draws from: set it to the one a run printed to replay that run',
  AGENT_BUS_TEST_SOAK: '`0` skips the soak test',
  AGENT_BUS_TEST_FIRST_COMMAND: "`0` skips the test of the README's set-up command (it installs from a clone)",
  AGENT_BUS_TEST_OTHER_NODE: 'a Node.js of another major version, for the tests that run two at once (`.ci/run` sets it)',
  AGENT_BUS_SOAK_DB: '`npm run soak` against this empty PostgreSQL database instead of a SQLite file',
  AGENT_BUS_TRACE_LOADS: "a file that the bundle tests' module hook appends the path of every loaded file to",
} as const;

/** The parts of the configuration reference that are written from this module, by name. */
export function referenceParts(): Record<string, string> {
  const table = (rows: ReadonlyArray<readonly [string, string]>): string =>
    ['| variable | meaning |', '|---|---|', ...rows.map(([name, meaning]) => `| \`${name}\` | ${meaning} |`)].join('\n');
  return {
    settings: settingsTables(),
    'wake-command': table(Object.entries(WAKE_COMMAND_HELP)),
    development: table(Object.entries(DEVELOPMENT_VARIABLES)),
  };
}

const PART = /(<!-- BEGIN ([a-z-]+): [^\n]*-->\n)(?:[\s\S]*?\n)?(<!-- END \2 -->)/g;

/**
 * The configuration reference's text with every generated part (between `<!-- BEGIN name: … -->`
 * and `<!-- END name -->`) written afresh; the text around them is left as it is. Throws when a part
 * is missing or unknown, so the page cannot silently lose one.
 */
export function fillReference(page: string): string {
  const parts = referenceParts();
  const seen = new Set<string>();
  const filled = page.replace(PART, (_, begin: string, name: string, end: string) => {
    const part = parts[name];
    if (part === undefined) throw new Error(`docs/configuration.md: no generated part is named ${name}`);
    seen.add(name);
    return `${begin}${part}\n${end}`;
  });
  const missing = Object.keys(parts).filter((name) => !seen.has(name));
  if (missing.length > 0) throw new Error(`docs/configuration.md lacks the generated part(s) ${missing.join(', ')}`);
  return filled;
}
