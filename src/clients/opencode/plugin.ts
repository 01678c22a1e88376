/**
 * The opencode plugin `agent-bus init` generates. opencode has no shell hooks,
 * so the plugin runs the hook commands itself, at the points that match:
 * - a session's first model request: `hook-session-start` (notices due to it);
 * - the first model request of each user turn: `hook-user-prompt` (mail, then
 *   notices); opencode keeps no system-prompt addition in the transcript, so
 *   the turn's text is repeated at each request of that turn;
 * - before each tool call: `hook-pre-tool` (critical notices), shown at the
 *   model request that follows the tool; the call (tool id and args) goes
 *   with it, and a write of a file another agent holds is refused by
 *   throwing the hook's reason;
 * - when a session goes idle with mail it must act on (`hook-stop --peek`,
 *   which takes nothing): one follow-up turn, whose first model request runs
 *   `hook-stop` to take that mail into its system prompt; with nothing to act
 *   on, `hook-watch` waits for its mail and starts a turn with it (mail taken
 *   just as the session turned busy waits for its next idle);
 * - a permission asked and answered, and a session deleted: `hook-notification`
 *   and `hook-session-end`, which note where the session stands (presence).
 * opencode 2 runs the same logic through its own plugin API (the default export's
 * `setup`; opencode 1.x calls its `server`): the session's `context` hook for the
 * system prompt, `prompt` for a turn's start, the tool hook `execute.before`,
 * `session.execution.*` events for busy and idle, and `session.prompt` for the
 * follow-up and wake turns (`queue`, or `steer` into a busy turn), each with a
 * message id of its own, kept for a retry. Its first prompt waits (bounded) for
 * the bus's MCP tools, which opencode 2 connects in the background.
 * The subscriptions (CHANNELS) are the one line a user edits; init keeps it.
 * They reach the hooks as AGENT_BUS_DEFAULT_CHANNELS, so an AGENT_BUS_CHANNELS
 * opencode was started with wins over them. The plugin is committed with the
 * repo: it runs the bare `agent-bus` and names no agent; each hook finds its
 * agent from `--client opencode` and the session's folder.
 */
/** The follow-up turn's prompt: the mail itself is taken into that turn's system prompt by the stop hook. */
export const FOLLOW_UP_PROMPT = '[agent-bus] Messages you must act on arrived as you finished; they are in your context now.';

export const PLUGIN_MARKER = '// Managed by `agent-bus init` — regenerated on every run; only the CHANNELS line is kept.';

/** Older plugins said every edit was lost: they are ours all the same. */
export const PLUGIN_MARKERS = [PLUGIN_MARKER, '// Managed by `agent-bus init` — regenerated on every run; edits are lost.'];

/** The subscriptions in a plugin init wrote earlier (perhaps edited since), or null. */
export function pluginChannels(source: string): string | null {
  const match = /^const CHANNELS = ("(?:[^"\\\n]|\\.)*");/m.exec(source);
  if (!match) return null;
  try {
    const value: unknown = JSON.parse(match[1] as string);
    return typeof value === 'string' ? value : null;
  } catch {
    return null;
  }
}

/** The plugin's source, with the command and subscriptions embedded as JSON string literals. */
export function opencodePluginSource(bin: string, channels: string, remote: string | null = null): string {
  return `${PLUGIN_MARKER}
// agent-bus for opencode: shows new mail and notices to the model and asks for a follow-up turn when mail waits.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';

// The notice channels this repo's sessions receive (comma-separated; * for all; empty for global notices only),
// unless opencode was started with AGENT_BUS_CHANNELS, which wins.
const CHANNELS = ${JSON.stringify(channels)};
const BIN = ${JSON.stringify(bin)};
// The hub this repo's sessions reach (init --remote), or null for this machine's bus. The token is $AGENT_BUS_TOKEN.
const HUB = ${JSON.stringify(remote)};
const TIMEOUT_MS = Number(process.env.AGENT_BUS_HOOK_TIMEOUT_MS) || 10000;
const FOLLOW_UP = ${JSON.stringify(FOLLOW_UP_PROMPT)};
// opencode's events that say where a session stands: the hook each runs, and the notification it hands it.
const PRESENCE_EVENTS = {
  'permission.asked': ['hook-notification', { notification_type: 'permission_prompt' }],
  'permission.updated': ['hook-notification', { notification_type: 'permission_prompt' }],
  'permission.replied': ['hook-notification', { notification_type: 'permission_replied' }],
  'session.deleted': ['hook-session-end', null],
};
// opencode 2's events for a session's turn ending: what opencode 1.x calls idle. An interrupted one (a
// person's Esc, or opencode ending) holds no stop and starts no watcher: nobody may be there to show mail to.
const IDLE_EVENTS = new Set(['session.execution.succeeded', 'session.execution.failed']);

// How long a session's first prompt waits for the bus's MCP tools (opencode 2 connects servers in the
// background) or, in opencode 1.x, for its MCP servers to connect.
const TOOLS_WAIT_MS = 10000;

// \`opencode run\` ends at its session's first idle and takes this plugin with it: 1.x runs the plugin in
// the run's own process, 2.x in a \`serve --stdio\` child of the run. A turn queued there for mail could
// start, take the mail into its request and be cut off before the request leaves, the mail marked
// read and never seen; so a one-shot run's idle leaves the mail unread for the session's next prompt.
// (A served session, the TUI and the shared service are not one-shot; where /proc cannot say, neither.)
const commandOf = (args) => args.find((arg) => !arg.startsWith('-'));
const parentArgs = () => {
  try {
    return readFileSync(\`/proc/\${process.ppid}/cmdline\`, 'utf8').split('\\0').slice(1);
  } catch {
    return [];
  }
};
const ownCommand = commandOf(process.argv.slice(2));
const ONE_SHOT_RUN = ownCommand === 'run' || (ownCommand === 'serve' && process.argv.includes('--stdio') && commandOf(parentArgs()) === 'run');

// The bus's side of opencode's sessions, whichever plugin API runs it. \`host\`: how to reach opencode:
// prompt(sessionID, text, delivery) starts or joins a turn, parentOf(sessionID) a session's parent,
// steers: whether mail found while a turn runs can join it (opencode 2) or waits for its end (1.x),
// ready() (where given) what a session's first hook waits for.
const agentBus = (directory, host) => {
  const stuck = new Set();
  // Each session's start hook, run once: a request that comes while it runs (opencode 1.x asks for a
  // title beside the turn's first request) waits for it, so no hook of the session runs before the
  // session is known to the bus.
  const started = new Map();
  const turnStarting = new Set();
  const turnText = new Map();
  const beforeTool = new Map();
  const checking = new Set();
  const busy = new Set();
  const watching = new Map();
  const handover = new Map();
  // Sessions given a follow-up turn for mail they must act on: its first model request takes that mail.
  const followUp = new Set();

  // Wait for the session's mail in the background; a newer watcher of the session replaces this one.
  const watch = (sessionID) => {
    if (watching.has(sessionID) || process.env.AGENT_BUS_NATIVE_WAKE === '0') return;
    let child;
    try {
      child = spawn(BIN, ['hook-watch', '--client', 'opencode'], {
        cwd: directory,
        // The watcher waits as long as this process runs.
        env: { ...process.env, ...(HUB ? { AGENT_BUS_URL: HUB } : {}), AGENT_BUS_DEFAULT_CHANNELS: CHANNELS, AGENT_BUS_WATCH_CLIENT_PID: String(process.pid) },
        stdio: ['pipe', 'ignore', 'pipe'],
      });
    } catch {
      return;
    }
    watching.set(sessionID, child);
    let said = '';
    child.stderr.on('data', (chunk) => (said += chunk));
    child.on('error', () => watching.delete(sessionID));
    child.on('close', (code) => {
      if (watching.get(sessionID) === child) watching.delete(sessionID);
      if (code !== 10 || !said.trim()) return;
      if (!busy.has(sessionID)) host.prompt(sessionID, said.trim(), 'queue').catch(() => {});
      else if (host.steers) host.prompt(sessionID, said.trim(), 'steer').catch(() => {});
      else handover.set(sessionID, said.trim());
    });
    child.stdin.on('error', () => {});
    child.stdin.end(JSON.stringify({ cwd: directory, session_id: sessionID }));
  };

  // Run one hook; never throws, never waits past TIMEOUT_MS, never restarts a hook that is still stuck.
  // \`call\`: the tool call a pre-tool hook is about (its id and args), so it can check the files it writes.
  // Its output, or null when it did not run to its end (stuck, not started, cut off with nothing said,
  // failed): "the hook said nothing" and "nobody knows" differ where nothing would be taken for no mail.
  const run = (subcommand, sessionID, flags = [], call = null) => {
    if (stuck.has(subcommand)) return Promise.resolve(null);
    return new Promise((resolve) => {
      let out = '';
      let done = false;
      const finish = (text) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        resolve(text === null ? null : text.trim());
      };
      let child;
      try {
        child = spawn(BIN, [subcommand, '--client', 'opencode', ...flags], {
          cwd: directory,
          env: { ...process.env, ...(HUB ? { AGENT_BUS_URL: HUB } : {}), AGENT_BUS_DEFAULT_CHANNELS: CHANNELS },
          stdio: ['pipe', 'pipe', 'ignore'],
        });
      } catch {
        return finish(null);
      }
      stuck.add(subcommand);
      // Past the time, what the hook has printed is used, and its output is closed: a hook that has not
      // printed yet then cannot, and gives its mail back rather than count it delivered.
      const timer = setTimeout(() => {
        child.stdout.destroy();
        finish(out.trim() === '' ? null : out);
      }, TIMEOUT_MS);
      child.stdout.on('data', (chunk) => (out += chunk));
      child.on('error', () => {
        stuck.delete(subcommand);
        finish(null);
      });
      child.on('close', (code) => {
        stuck.delete(subcommand);
        finish(code === 0 || out.trim() !== '' ? out : null);
      });
      child.stdin.on('error', () => {});
      child.stdin.end(JSON.stringify({ cwd: directory, session_id: sessionID ?? null, ...(call ?? {}) }));
    });
  };

  return {
    // A user's (or a follow-up's) message starts a turn.
    turnStarts(sessionID) {
      if (!sessionID) return;
      busy.add(sessionID);
      turnStarting.add(sessionID);
      turnText.delete(sessionID);
    },
    busy(sessionID) {
      if (sessionID) busy.add(sessionID);
    },
    interrupted(sessionID) {
      busy.delete(sessionID);
      turnText.delete(sessionID);
    },
    // What the session's next model request adds to its system prompt, or null.
    async systemText(sessionID) {
      try {
        const turn = turnText.get(sessionID) ?? [];
        if (!started.has(sessionID)) {
          // The bus's MCP server first (opencode 1.x connects it at a turn's first tools, which a title
          // request comes before): it takes the session's address, which the hooks then speak as.
          const starting = (host.ready ? host.ready() : Promise.resolve()).then(() => run('hook-session-start', sessionID));
          started.set(sessionID, starting);
          const text = await starting;
          if (text) turn.push(text);
        } else await started.get(sessionID);
        // A turn starts at the first request after a user message (or the first this plugin sees).
        if (turnStarting.has(sessionID) || !turnText.has(sessionID)) {
          turnStarting.delete(sessionID);
          if (followUp.delete(sessionID)) {
            // The mail this follow-up turn is for is taken now, as it goes into the model's request.
            const answer = await run('hook-stop', sessionID);
            const decision = answer ? JSON.parse(answer) : null;
            if (decision?.decision === 'block' && decision.reason) turn.push(decision.reason);
          }
          const text = await run('hook-user-prompt', sessionID);
          if (text) turn.push(text);
        }
        turnText.set(sessionID, turn);
        const critical = beforeTool.get(sessionID);
        beforeTool.delete(sessionID);
        const parts = critical ? [...turn, critical] : turn;
        return parts.length > 0 ? parts.join('\\n') : null;
      } catch {
        // The model request goes ahead without mail.
        return null;
      }
    },
    // Before a tool runs: its notices wait for the next request; a write of a file another agent holds
    // comes back as {"decision":"deny","reason":…}, thrown: it stops the tool, and opencode shows the
    // model the reason as the tool's error.
    async beforeTool(sessionID, tool, args) {
      let refused = null;
      try {
        if (!sessionID) return;
        const text = await run('hook-pre-tool', sessionID, [], { tool_name: tool ?? null, tool_input: args ?? null });
        const decision = text?.startsWith('{') ? JSON.parse(text) : null;
        if (decision?.decision === 'deny' && typeof decision.reason === 'string') refused = decision.reason;
        else if (text) beforeTool.set(sessionID, text);
      } catch {
        // The tool runs without notices.
      }
      if (refused !== null) throw new Error(refused);
    },
    // opencode's events that say where a session stands (PRESENCE_EVENTS).
    async presence(type, sessionID) {
      const presence = Object.hasOwn(PRESENCE_EVENTS, String(type)) ? PRESENCE_EVENTS[type] : null;
      if (!presence || !sessionID) return false;
      await run(presence[0], sessionID, [], presence[1]);
      return true;
    },
    // The session finished its turn: one follow-up turn if mail it must act on waits, else a watcher.
    async idle(sessionID) {
      if (!sessionID || checking.has(sessionID)) return;
      checking.add(sessionID);
      try {
        busy.delete(sessionID);
        turnText.delete(sessionID);
        if (await host.parentOf(sessionID)) return; // A subagent's session: its parent handles mail.
        if (ONE_SHOT_RUN) return; // The run ends here: its mail waits, unread, for the next prompt.
        const waiting = handover.get(sessionID);
        if (waiting) {
          handover.delete(sessionID);
          await host.prompt(sessionID, waiting, 'queue');
          return;
        }
        // Only whether mail to act on waits: taking it here would mark it delivered before the model
        // has it, and the follow-up turn may never reach the model (\`opencode run\` may exit at idle).
        const answer = await run('hook-stop', sessionID, ['--peek']);
        // Not known (the hook stuck, or cut off as opencode ends): a watcher now could take mail that
        // the session, ending, never shows. The next turn's prompt hook shows it.
        if (answer === null) return;
        const decision = answer ? JSON.parse(answer) : null;
        if (decision?.decision === 'block' && decision.reason) {
          followUp.add(sessionID);
          await host.prompt(sessionID, FOLLOW_UP, 'queue');
          return;
        }
        watch(sessionID);
      } catch {
        // Best effort: mail not acted on now waits for the next prompt.
      } finally {
        checking.delete(sessionID);
      }
    },
    // The shell tool's commands (a git commit's guard among them) are known as this client's: the guard
    // finds its agent, as the hooks do, from the client and the repo.
    shellEnv(env) {
      if (!env || typeof env !== 'object') return;
      env.AGENT_BUS_CLIENT = 'opencode';
      if (HUB) env.AGENT_BUS_URL = HUB;
    },
  };
};

// opencode 1.x: a server plugin returning its hooks.
const server = async ({ client, directory }) => {
  let mcpReady = null;
  const bus = agentBus(directory, {
    steers: false,
    // Connects the MCP servers (the bus's among them) and waits for them, bounded.
    ready: () =>
      (mcpReady ??= new Promise((resolve) => {
        const timer = setTimeout(resolve, TOOLS_WAIT_MS);
        Promise.resolve()
          .then(() => client.mcp.status())
          .catch(() => {})
          .finally(() => {
            clearTimeout(timer);
            resolve();
          });
      })),
    // Admitted, not answered: \`prompt\` would wait out the whole turn, whose own idle would then find
    // the session still being checked, and start no watcher.
    prompt: (sessionID, text) => {
      const request = { path: { id: sessionID }, body: { parts: [{ type: 'text', text }] } };
      return client.session.promptAsync ? client.session.promptAsync(request) : client.session.prompt(request);
    },
    parentOf: async (sessionID) => {
      const session = await client.session.get({ path: { id: sessionID } });
      return session?.data?.parentID ?? session?.parentID ?? null;
    },
  });
  return {
    'chat.message': async (input) => bus.turnStarts(input?.sessionID),
    'experimental.chat.system.transform': async (input, output) => {
      const text = await bus.systemText(input?.sessionID);
      if (text) output.system.push(text);
    },
    'shell.env': async (_input, output) => bus.shellEnv(output?.env),
    'tool.execute.before': async (input, output) => bus.beforeTool(input?.sessionID, input?.tool, output?.args),
    event: async ({ event }) => {
      try {
        const sessionID = event?.properties?.sessionID ?? event?.properties?.info?.id;
        if (await bus.presence(event?.type, sessionID)) return;
        const idle = event?.type === 'session.idle' || (event?.type === 'session.status' && event?.properties?.status?.type === 'idle');
        if (idle) await bus.idle(event?.properties?.sessionID);
      } catch {
        // Best effort.
      }
    },
  };
};

// A message id in opencode 2's own form (time-ordered, so the transcript keeps its order), made once
// per delivery: a retry with the same id returns the message already admitted rather than a second one.
let lastTime = 0;
let counter = 0;
const messageID = () => {
  const now = Date.now();
  counter = now === lastTime ? counter + 1 : 0;
  lastTime = now;
  const stamp = ((BigInt(now) * 4096n + BigInt(counter)) & 0xffffffffffffn).toString(16).padStart(12, '0');
  const letters = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
  return \`msg_\${stamp}\${Array.from(randomBytes(14), (byte) => letters[byte % 62]).join('')}\`;
};

// opencode 2: a plugin definition's setup, through its context.
const setup = async (ctx) => {
  const directory = ctx?.location?.directory ?? process.cwd();
  const prompt = async (sessionID, text, delivery) => {
    const id = messageID();
    for (let attempt = 0; ; attempt++) {
      try {
        return await ctx.session.prompt({ sessionID, id, text, delivery });
      } catch (error) {
        if (attempt >= 2) throw error;
        await new Promise((resolve) => setTimeout(resolve, 200 * (attempt + 1)));
      }
    }
  };
  const bus = agentBus(directory, {
    steers: true,
    prompt,
    parentOf: async (sessionID) => {
      const session = await ctx.session.get({ sessionID });
      return session?.data?.parentID ?? session?.parentID ?? null;
    },
  });
  // opencode 2 connects MCP servers in the background: the first prompt waits (bounded) until the
  // bus's tools are offered, or its first request would go out without them.
  let toolsReady = null;
  const ours = (tool) => String(tool?.name ?? '').startsWith('agent-bus') || tool?.options?.namespace === 'agent-bus' || tool?.server === 'agent-bus';
  const waitForTools = async () => {
    const until = Date.now() + TOOLS_WAIT_MS;
    while (Date.now() < until) {
      try {
        const listed = await ctx.tool.list();
        const tools = Array.isArray(listed) ? listed : (listed?.data ?? []);
        if (tools.some(ours)) return;
      } catch {
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  await ctx.session.hook('prompt', async (event) => {
    toolsReady ??= waitForTools();
    await toolsReady;
    bus.turnStarts(event?.sessionID);
  });
  await ctx.session.hook('context', async (event) => {
    const text = await bus.systemText(event?.sessionID);
    if (text && Array.isArray(event?.system)) event.system.push({ type: 'text', text });
  });
  await ctx.tool.hook('execute.before', async (event) => bus.beforeTool(event?.sessionID, event?.tool, event?.input));
  if (ctx.shell?.hook) await ctx.shell.hook('create.before', async (event) => bus.shellEnv(event?.env));
  let open = true;
  const events = ctx.event.subscribe();
  (async () => {
    try {
      for await (const event of events) {
        if (!open) break;
        const sessionID = event?.data?.sessionID;
        try {
          if (await bus.presence(event?.type, sessionID)) continue;
          if (event?.type === 'session.execution.started') bus.busy(sessionID);
          else if (IDLE_EVENTS.has(event?.type)) await bus.idle(sessionID);
          else if (event?.type === 'session.execution.interrupted') bus.interrupted(sessionID);
        } catch {
          // Best effort.
        }
      }
    } catch {
      // The event stream ended with opencode.
    }
  })();
  return () => {
    open = false;
  };
};

// opencode 2 loads a plugin's default definition (id, setup); opencode 1.x (1.18.29 on) its \`server\`.
export default { id: 'agent-bus', setup, server };
`;
}
