/**
 * Every subcommand the CLI knows, with its arguments and help. Each command's
 * code lives in its own bundle (src/cli/commands/<name>.ts), loaded only when
 * that command runs.
 */
import type { CommandSpec } from './spec.js';

const json = { name: 'json', type: 'boolean', description: 'print machine-readable JSON' } as const;
const speaker = {
  name: 'name',
  type: 'string',
  value: 'NAME',
  description: 'act as this agent instead of $AGENT_BUS_NAME (or human)',
} as const;

export const COMMANDS: CommandSpec[] = [
  {
    name: 'demo',
    summary: 'A first look: mail sent, waiting in an inbox, read and audited, on a scratch bus.',
    details: [
      'Runs the real commands (send, agents, inbox, tail) against a scratch bus in a temp folder,',
      'printing each as you would type it. A Claude Code session, demo/claude, joins the scratch bus',
      'first, so the mail has somewhere to wait. The scratch bus is removed at the end; your own bus',
      '(~/.claude-agent-bus) is never opened.',
    ].join('\n'),
    positionals: [],
    options: [{ name: 'keep', type: 'boolean', description: 'keep the scratch bus and print how to explore it' }],
    examples: ['agent-bus demo', 'agent-bus demo --keep'],
  },
  {
    name: 'send',
    summary: 'Send mail to an agent, a client, a repo, or everyone (*).',
    details: [
      'NAME forms: repo/client-N or repo/client-label (one session), repo/client (whichever session',
      'of that client reads first), repo (every client in the repo; one of them claims it), * (everyone).',
      'Use - as BODY to read the body from standard input.',
    ].join('\n'),
    positionals: [{ name: 'BODY', required: true, description: 'the message text, or - to read it from stdin' }],
    options: [
      { name: 'to', type: 'string', value: 'NAME', description: 'recipient', default: '*' },
      { name: 'thread', type: 'string', value: 'ID', description: 'reply on this thread instead of starting one' },
      speaker,
      json,
    ],
    examples: ['agent-bus send "please review the login form" --to web-app', 'git diff | agent-bus send - --to api/claude'],
  },
  {
    name: 'inbox',
    summary: 'Show unread mail and mark it read.',
    positionals: [],
    options: [
      speaker,
      { name: 'limit', type: 'string', value: 'N', description: 'show at most N messages', default: '50' },
      { name: 'peek', type: 'boolean', description: 'show without marking read or claiming' },
      { name: 'short', type: 'boolean', description: 'one line per message' },
      json,
    ],
  },
  {
    name: 'chat',
    summary: "The human's seat on the bus: mail arrives above the line you type; commands start with /.",
    details: "Connects as --name, else $AGENT_BUS_NAME, else human. /help inside lists the commands. History persists in chat_history next to the database.",
    positionals: [],
    options: [speaker],
    examples: ['agent-bus chat', 'agent-bus chat --name alex'],
  },
  {
    name: 'agents',
    summary: 'List the agents on the bus, grouped by repo, with unread counts.',
    positionals: [],
    options: [json],
  },
  {
    name: 'forget',
    summary: 'Remove an agent (or every agent of a repo) from the roster. Message history is kept.',
    positionals: [{ name: 'NAME', required: false, description: 'the agent to forget' }],
    options: [
      { name: 'group', type: 'string', value: 'REPO', description: 'forget every agent of this repo' },
      json,
    ],
    examples: ['agent-bus forget human', 'agent-bus forget --group old-repo'],
  },
  {
    name: 'tail',
    summary: 'Show the audit log, newest last; -f follows it live.',
    positionals: [],
    options: [
      { name: 'follow', short: 'f', type: 'boolean', description: 'keep printing new rows as they are written' },
      { name: 'limit', type: 'string', value: 'N', description: 'rows to show first', default: '50' },
      { name: 'full', type: 'boolean', description: 'print whole previews, wrapped to the terminal' },
      { name: 'json', type: 'boolean', description: 'print one JSON object per line' },
    ],
    examples: ['agent-bus tail -f', `agent-bus tail --json | jq 'select(.op=="send")'`],
  },
  {
    name: 'init',
    summary: 'Wire repos for your clients: the MCP server, the hooks and pre-approved tools.',
    details: [
      'Each client is wired as <repo>/<client>. A single repo is written at once; several paths or --scan',
      'show a plan first (--apply writes it). Re-running refreshes what init wrote and adds nothing twice;',
      'hand-written agent-bus entries are kept unless --force, and a file that cannot be parsed is never touched.',
    ].join('\n'),
    positionals: [{ name: 'PATHS...', required: false, variadic: true, description: 'repos (or, with --scan, folders to search); default: this folder' }],
    options: [
      { name: 'clients', type: 'string', value: 'LIST', description: 'comma-separated clients to wire', default: 'claude' },
      { name: 'scan', type: 'boolean', description: 'treat PATHS as roots and find the git repos under them' },
      { name: 'apply', type: 'boolean', description: 'write the plan (needed with --scan or several paths)' },
      { name: 'force', type: 'boolean', description: 'replace hand-written agent-bus entries' },
      { name: 'prefix', type: 'string', value: 'STR', description: 'put STR in front of every derived repo name' },
      { name: 'name', type: 'string', value: 'NAME', description: 'the repo name to use (single repo only)' },
      { name: 'bin-path', type: 'string', value: 'PATH', description: 'the agent-bus to write into configs (default: $AGENT_BUS_BIN, else the one on PATH)' },
      json,
    ],
    examples: ['agent-bus init', 'agent-bus init --scan ~/projects', 'agent-bus init --scan ~/projects --apply'],
  },
  {
    name: 'channel',
    summary: 'Notices on named channels: publish, list, acknowledge, clear.',
    details: [
      'A notice is a broadcast with a severity and a TTL, shown to the sessions subscribed to its channel',
      '(AGENT_BUS_CHANNELS at launch, else AGENT_BUS_DEFAULT_CHANNELS from the settings init wrote):',
      'critical at every turn and before every tool call, alert at every turn, info once per session.',
      'Notices are context, not mail: nobody replies to them.',
      '',
      'Actions:',
      '  publish CHANNEL MESSAGE...   publish a notice (its words joined; MESSAGE - reads standard input)',
      '  list [CHANNEL]            live channels with counts; with CHANNEL or --notices, the notices themselves',
      '  acknowledge ID --session KEY   stop showing notice ID to one client session',
      '  clear ID | --channel NAME | --global | --all   remove notices for everyone',
      '',
      'TTL: seconds, or a number with s, m, h or d. Default by severity: critical 30m, alert 1h, info 4h.',
    ].join('\n'),
    positionals: [
      { name: 'ACTION', required: true, description: 'publish, list, acknowledge or clear' },
      { name: 'ARGS...', required: false, variadic: true, description: "the action's arguments" },
    ],
    options: [
      { name: 'severity', short: 's', type: 'string', value: 'LEVEL', description: 'publish: info, alert or critical', default: 'info' },
      { name: 'ttl', short: 't', type: 'string', value: 'TTL', description: 'publish: how long the notice lives (30m, 4h, 1d, seconds)' },
      { name: 'title', type: 'string', value: 'TEXT', description: 'publish: a title shown before the message' },
      { name: 'priority', type: 'string', value: 'N', description: 'publish: order within a severity, higher first', default: '5' },
      { name: 'source', type: 'string', value: 'NAME', description: 'publish: who it is from', default: 'operator' },
      { name: 'notices', type: 'boolean', description: 'list: every live notice instead of channel counts' },
      { name: 'expired', type: 'boolean', description: 'list: include expired notices not yet removed' },
      { name: 'session', type: 'string', value: 'KEY', description: 'acknowledge: the client session id (e.g. $CLAUDE_CODE_SESSION_ID)' },
      { name: 'channel', type: 'string', value: 'NAME', description: "clear: every notice on this channel" },
      { name: 'global', type: 'boolean', description: 'clear: every global notice' },
      { name: 'all', type: 'boolean', description: 'clear: every notice' },
      json,
    ],
    examples: [
      'agent-bus channel publish deploy "Deploy freeze until 3am" -s critical -t 4h',
      'agent-bus channel list',
      'agent-bus channel list deploy --json',
      'agent-bus channel acknowledge 3f2a9c1d7e4b --session "$CLAUDE_CODE_SESSION_ID"',
      'agent-bus channel clear --channel deploy',
    ],
  },
  {
    name: 'notice',
    summary: 'Publish a global notice: every session sees it, whatever it subscribes to.',
    details: "Not mail: for mail to everyone, use 'agent-bus send --to \\*'. Severity and TTL as for 'channel publish'.",
    positionals: [{ name: 'MESSAGE...', required: true, variadic: true, description: 'the notice text (several words are joined with spaces), or - to read it from stdin' }],
    options: [
      { name: 'severity', short: 's', type: 'string', value: 'LEVEL', description: 'info, alert or critical', default: 'info' },
      { name: 'ttl', short: 't', type: 'string', value: 'TTL', description: 'how long it lives (30m, 4h, 1d, seconds); default by severity' },
      { name: 'title', type: 'string', value: 'TEXT', description: 'a title shown before the message' },
      { name: 'source', type: 'string', value: 'NAME', description: 'who it is from', default: 'operator' },
      json,
    ],
    examples: ['agent-bus notice "main is frozen for the release" -s alert -t 2h'],
  },
  {
    name: 'brain',
    summary: "The brain adapter: read its source into the brain channel now, or show how it stands.",
    details: [
      'The brain is a source of notices: a folder of markdown files with YAML front matter (BRAIN_SOURCE_PATH,',
      'default brain-feed in the bus folder) or an HTTP feed (BRAIN_URL/feed). It is reconciled into the',
      'BRAIN_CHANNEL channel (default brain) when a session starts and every BRAIN_REFRESH_TOOL_CALLS tool calls.',
      '',
      'Actions:',
      '  refresh   read the source now; exit 1 when it is unavailable (the channel keeps its content)',
      '  status    source, entries, live notices, content hash, cadence, last fetch, warnings (no fetch)',
      '  markers   write back the markers (<!-- @lesson … -->…<!-- @/lesson -->) of a Stop hook payload on stdin',
      '            to BRAIN_URL/marker, each once per session; what cannot be sent waits in brain-outbox/',
      '            (the Stop hook runs this in the background when BRAIN_WRITER_ENABLED)',
    ].join('\n'),
    positionals: [{ name: 'ACTION', required: true, description: 'refresh, status or markers' }],
    options: [json],
    examples: ['agent-bus brain status', 'BRAIN_SOURCE_PATH=~/vault/brain-feed agent-bus brain refresh'],
  },
  {
    name: 'wake-config',
    summary: 'The wake commands in wake.json: run when mail arrives for an agent, its client or its repo.',
    details: [
      'wake.json sits next to the database. An agent\'s own entry wins over its client address, which wins',
      'over its repo; false turns waking off. The command runs detached with AGENT_BUS_FROM, AGENT_BUS_TO,',
      'AGENT_BUS_THREAD_ID, AGENT_BUS_MESSAGE_ID and AGENT_BUS_BODY_PREVIEW in its environment and the whole',
      'message as JSON on stdin; quote the variables ("$AGENT_BUS_BODY_PREVIEW"): bodies are untrusted text.',
      '',
      'Actions:',
      '  show                  the entries (or the reason the file cannot be used)',
      '  set NAME COMMAND      set NAME\'s command; COMMAND false turns waking off for NAME',
      '  clear NAME            remove NAME\'s entry',
      '  test NAME             fire a synthetic wake for NAME and report its status (exit 1 if nothing fired)',
    ].join('\n'),
    positionals: [
      { name: 'ACTION', required: true, description: 'show, set, clear or test' },
      { name: 'NAME', required: false, description: 'an agent, a client address (repo/client) or a repo' },
      { name: 'COMMAND', required: false, description: 'set: the shell command, or false' },
    ],
    options: [json],
    examples: [
      `agent-bus wake-config set web-app 'notify-send "agent-bus → web-app" "$AGENT_BUS_FROM: $AGENT_BUS_BODY_PREVIEW"'`,
      'agent-bus wake-config set alex false',
      'agent-bus wake-config test web-app/claude',
    ],
  },
  {
    name: 'store',
    summary: 'Move a whole bus between engines: store copy FROM TO (a SQLite file, a postgres:// URL).',
    details: [
      'Copies every agent, message, session, notice, receipt, counter and piece of state, rows as they are,',
      'into a target that holds nothing yet (an empty PostgreSQL database, or a new SQLite file), then checks',
      "that every table holds as many rows on both sides. Stop the bus's clients first: a copy of a bus in use",
      'can miss what is written meanwhile. The audit log is a file and stays where it is.',
    ].join('\n'),
    positionals: [
      { name: 'ACTION', required: true, description: 'copy' },
      { name: 'FROM', required: false, description: 'the bus to copy: a SQLite file or a postgres:// URL' },
      { name: 'TO', required: false, description: 'where to copy it: an empty PostgreSQL database, or a new SQLite file' },
    ],
    options: [json],
    examples: ['agent-bus store copy ~/.claude-agent-bus/bus.db postgres://bus@db.internal/agent_bus'],
  },
  {
    name: 'statusline',
    summary: "One status line for Claude Code's statusLine setting: identity, subscriptions, mail, notices.",
    details: "Reads Claude Code's status JSON on stdin (for the session id and folder). Set it with\n" +
      '{"statusLine": {"type": "command", "command": "agent-bus statusline"}} in .claude/settings.json.\n' +
      'After the subscriptions, in brackets, the layer that set them: launch (AGENT_BUS_CHANNELS at start),\n' +
      'local (.claude/settings.local.json), repo (.claude/settings.json), user (~/.claude/settings.json or\n' +
      "the bus's .env); nothing when no layer sets them.",
    positionals: [],
    options: [
      { name: 'client', type: 'string', value: 'ID', description: 'client id, to derive the name as the hooks do', default: 'claude' },
      json,
    ],
  },
  {
    name: 'hook-session-start',
    summary: 'Session-start hook: print the notices due to a new session.',
    details: 'Reads the hook payload (JSON) on stdin; the session id in it keys once-per-session notices.',
    positionals: [],
    options: [{ name: 'client', type: 'string', value: 'ID', description: 'client id: picks the output dialect and derives the name' }],
    examples: ['agent-bus hook-session-start --client claude'],
  },
  {
    name: 'hook-pre-tool',
    summary: 'Pre-tool hook: print the critical notices due before a tool call.',
    details: 'Reads the hook payload (JSON) on stdin; prints PreToolUse additionalContext JSON for Claude Code and Codex. Never blocks the tool.',
    positionals: [],
    options: [{ name: 'client', type: 'string', value: 'ID', description: 'client id: picks the output dialect and derives the name' }],
    examples: ['agent-bus hook-pre-tool --client claude'],
  },
  {
    name: 'hook-user-prompt',
    summary: "Prompt hook: print new mail, then the notices due, in the client's hook dialect.",
    details: 'Reads the hook payload (JSON) on stdin. Identity as for serve; silent in repos not on the bus.',
    positionals: [],
    options: [{ name: 'client', type: 'string', value: 'ID', description: 'client id: picks the output dialect and derives the name' }],
    examples: ['agent-bus hook-user-prompt --client claude'],
  },
  {
    name: 'hook-stop',
    summary: 'Stop hook: keep the turn open while mail this agent must act on is waiting.',
    details: 'Reads the hook payload (JSON) on stdin; prints {"decision":"block","reason":…} (or its client\'s form) when blocking.',
    positionals: [],
    options: [{ name: 'client', type: 'string', value: 'ID', description: 'client id: picks the output dialect and derives the name' }],
    examples: ['agent-bus hook-stop --client claude'],
  },
  {
    name: 'hook-watch',
    summary: 'Background hook: wait for mail for this session; exit 10 with it on stderr, or 0.',
    details: [
      'Run by a client after each turn (Claude Code: an asyncRewake hook). Event-driven; one watcher per session',
      '(a newer one takes over). Exits 0 when it gives up (--max-seconds, else AGENT_BUS_WATCH_HOURS), when its',
      'client exits, when wake.json has an entry for the session (a command replaces native wake), when',
      'AGENT_BUS_NATIVE_WAKE=0, and at once for Claude Code outside an interactive session (CLAUDE_CODE_ENTRYPOINT=cli).',
    ].join('\n'),
    positionals: [],
    options: [
      { name: 'client', type: 'string', value: 'ID', description: 'client id: derives the name as the other hooks do' },
      { name: 'max-seconds', type: 'string', value: 'N', description: 'give up after N seconds (default: AGENT_BUS_WATCH_HOURS, 24 h)' },
    ],
    examples: ['agent-bus hook-watch --client claude --max-seconds 86400'],
  },
  {
    name: 'serve',
    summary: 'Run the MCP server over stdio for one client session (what a client config starts), or the hub (--http).',
    details: [
      'Identity: AGENT_BUS_NAME (with AGENT_BUS_REPO), else --client (or AGENT_BUS_CLIENT) plus the repo',
      'this runs in gives <repo>/<client>; each session then claims its own address, <repo>/<client>-N.',
      '',
      'With --http: the hub. The same tools at /mcp over Streamable HTTP, each request speaking as the agent',
      'its bearer token names (agent-bus token create), /healthz for load balancers. It listens on',
      '127.0.0.1 unless --host says otherwise, and prints "agent-bus hub: listening on http://HOST:PORT".',
      'AGENT_BUS_HTTP_RATE: requests per second per token (default 200); SIGTERM drains what is in flight.',
    ].join('\n'),
    positionals: [],
    options: [
      { name: 'client', type: 'string', value: 'ID', description: 'client id (claude, codex, opencode, agy, …) when AGENT_BUS_NAME is not set' },
      { name: 'http', type: 'boolean', description: 'run the hub instead: the bus over Streamable HTTP for agents on other machines, one token each' },
      { name: 'host', type: 'string', value: 'HOST', description: 'with --http: the address to listen on', default: '127.0.0.1' },
      { name: 'port', type: 'string', value: 'PORT', description: 'with --http: the port (0: a free one)', default: '8787' },
    ],
    examples: ['agent-bus serve --client claude', 'agent-bus serve --http', 'agent-bus serve --http --host 0.0.0.0 --port 8787'],
  },
  {
    name: 'token',
    summary: 'The hub\'s tokens, one per agent: token create NAME, token list, token revoke NAME|ID.',
    details: [
      'Actions:',
      '  create NAME     make a token that speaks for the agent NAME over the hub, and print it once',
      '  list            every token: id, agent, scopes, created, last used, expires, revoked (never a token)',
      '  revoke NAME|ID  refuse the token with that id, or every token of that agent, from the next request on',
      '',
      'A token is stored only as a hash: lose it and make a new one. Give it to the other machine as',
      'AGENT_BUS_TOKEN, or with agent-bus login; never put it in a file a repo holds.',
    ].join('\n'),
    positionals: [
      { name: 'ACTION', required: true, description: 'create, list or revoke' },
      { name: 'NAME', required: false, description: 'create: the agent; revoke: the agent or a token id' },
    ],
    options: [
      { name: 'repo', type: 'string', value: 'PATH', description: 'create: the folder the agent works in, as the roster shows it (default: its repo name)' },
      { name: 'expires', type: 'string', value: 'DURATION', description: 'create: how long the token lasts (30m, 12h, 90d, 2w; default: until revoked)' },
      { name: 'scope', type: 'string', value: 'SCOPES', description: 'create: more it may do, comma-separated: metrics (read /metrics from anywhere)' },
      json,
    ],
    examples: ['agent-bus token create shop/claude --expires 90d', 'agent-bus token list --json', 'agent-bus token revoke shop/claude'],
  },
];

export function findCommand(name: string): CommandSpec | undefined {
  return COMMANDS.find((command) => command.name === name);
}
