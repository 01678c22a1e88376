/**
 * The agent-bus MCP server over stdio: one per client session. It works out
 * who it is from its configuration, holds a session address, and serves the
 * bus's tools (mcp/tool-names.ts), each attributed to that identity. Nothing but protocol goes to
 * stdout; diagnostics go to stderr.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { tailAudit } from '../audit/log.js';
import type { Bus } from '../core/bus.js';
import { BusError, isStoreUnavailable } from '../model/errors.js';
import { IdentityError, resolveIdentity, type Identity } from '../adapters/identity.js';
import { clientStartingServer } from '../clients/registry/profiles.js';
import { composeName, repoOf } from '../core/names.js';
import { serveOutbox } from '../adapters/outbox-serving.js';
import { busPaths } from '../adapters/paths.js';
import type { Env } from '../model/settings.js';
import { ServerSession } from './session.js';
import { buildTools } from './tools.js';
import { hookTool } from './hook-tool.js';

export interface ServeOptions {
  env: Env;
  cwd: string;
  /** Open the bus this server speaks on (a machine set to use a hub refuses: its client reaches the hub itself). */
  openBus(): Bus;
  client?: string | undefined;
  version: string;
  log(line: string): void;
  /** Start waking the session when mail comes while it is idle (through its client's inbox socket); null where that is not this server's job. */
  wake?: (session: { bus: Bus; env: Env; client: string | undefined; reader(): string; log(line: string): void }) => Promise<{ stop(): Promise<void> } | null>;
}

export function instructionsFor(name: string): string {
  return [
    `You are '${name}' on agent-bus, a message bus shared by the coding agents and humans on this machine.`,
    'Your identity is attached to every call; never pass a sender name.',
    'Address forms for send_message(to=…):',
    "  'repo/client-N' or 'repo/client-label': exactly that session;",
    "  'repo/client': whichever session of that client reads it first;",
    "  'repo': every client working in that repo (the first to read it claims it and should act);",
    "  '*': everyone on the bus.",
    'Read your mail with read_inbox, reply on the same thread_id, and call list_agents to see who is reachable.',
    'Call set_session(label=…, topic=…) to name this session after its work.',
    "Before a large edit, reserve_files(paths) so other agents' edits of those files are refused; release_files() when done.",
    'To hand work over and get its outcome back, create_task(title, to) rather than send a message: the taker closes it with complete_task(id, result) or fail_task(id, reason), and the result comes back to you as urgent mail. Take what is offered to you with take_task(id).',
    "Mail marked urgent reaches you between tool calls; send_message(…, urgent: true) only for what cannot wait for the recipient's turn to end.",
  ].join('\n');
}

/**
 * The identity a server speaks as when the client that started it is not the one its config names:
 * Copilot CLI reads Claude Code's `.mcp.json`, whose entry wins over its own, and says in the server's
 * environment that it started it (ClientProfile.serverMarker). Such a server speaks for that client in
 * the same repo, never as the other client (whose mail it would take).
 */
function asStartingClient(identity: Extract<Identity, { kind: 'agent' }>, env: Env): Extract<Identity, { kind: 'agent' }> {
  const starter = clientStartingServer(env);
  if (starter === null || identity.client === null || identity.client === starter) return identity;
  return { ...identity, name: composeName(repoOf(identity.name), starter), client: starter, pinnedHandle: null };
}

export async function serve(options: ServeOptions): Promise<number> {
  const { env, log } = options;
  let bus: Bus;
  try {
    bus = options.openBus();
  } catch (error) {
    log(`agent-bus: ${(error as Error).message}`);
    return error instanceof BusError ? error.exitCode : 1;
  }
  bus.mail.keepSearchIndexCurrent();
  // A store that cannot be reached (a server down) does not stop the server: it serves, every call
  // tries the store again, and whoami says what is wrong. The identity comes from the config then.
  let storeProblem: string | null = null;
  const tolerate = <T>(fallback: T) => (error: unknown): T => {
    if (!isStoreUnavailable(error)) throw error;
    storeProblem = (error as Error).message;
    return fallback;
  };
  const lookups = {
    at: (path: string) => bus.roster.at(path).catch(tolerate([])),
    get: (name: string) => bus.roster.get(name).catch(tolerate(null)),
  };
  let identity;
  try {
    identity = await resolveIdentity({ env, client: options.client, cwd: options.cwd }, lookups, 'server');
  } catch (error) {
    await bus.close();
    if (error instanceof IdentityError) {
      log(`agent-bus: ${error.message}. Set it in the env block of this client's MCP server config.`);
      return 2;
    }
    throw error;
  }
  if (identity.kind === 'agent') identity = asStartingClient(identity, env);
  if (identity.kind !== 'agent') {
    await bus.close();
    const marker = identity.kind === 'opted-out' ? identity.marker : '';
    log(`agent-bus: ${marker.replace(/\/\.agent-bus-ignore$/, '')} is opted out of the bus by its .agent-bus-ignore file. Remove that file to let an agent run here.`);
    return 2;
  }

  const session = new ServerSession(bus, identity, env);
  await session.start().catch(tolerate(undefined));
  session.noteStoreProblem(storeProblem);
  for (const warning of session.warnings) log(`agent-bus: warning: ${warning}`);

  const server = new McpServer({ name: 'agent-bus', version: options.version }, { instructions: instructionsFor(session.name) });
  buildTools(server, {
    bus,
    session,
    auditPath: busPaths(env).audit,
    tailAudit,
    touched: new Map(),
    env,
    // spawn_agent starts a supervisor with this program, as `agent-bus spawn` does.
    fleet: { busFolder: busPaths(env).folder, cli: { node: process.execPath, script: process.argv[1] as string } },
  });
  // The client's hooks, where it calls them as tools of this server (mcp_tool): no process per hook.
  hookTool(server, { bus, session, env, client: options.client ?? identity.client ?? null, cwd: options.cwd, log });

  // Waking is a courtesy: a store that cannot be reached now leaves the session to its watcher.
  const waker = await (options.wake?.({ bus, env, client: options.client ?? identity.client ?? undefined, reader: () => session.name, log }) ?? Promise.resolve(null)).catch(tolerate(null));
  const transport = new StdioServerTransport();
  const stopPruning = bus.retention.keepPruned(session.name, log);
  // On one machine, a session's server may post the outbox's events (one process at a time does).
  const outbox = serveOutbox(bus, env, log);
  return new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (code: number): void => {
      if (stopping) return;
      stopping = true;
      stopPruning();
      void session
        .release()
        .catch((error: unknown) => log(`agent-bus: could not release the session: ${(error as Error).message}`))
        .finally(() => {
          // Let go of stdin too, or a signal would leave the process waiting on it.
          process.stdin.destroy();
          void Promise.all([outbox.stop(), waker?.stop()])
            .then(() => bus.close())
            .then(() => server.close())
            .catch(() => undefined)
            .finally(() => resolve(code));
        });
    };
    transport.onclose = () => stop(0);
    process.stdin.once('end', () => stop(0));
    process.once('SIGTERM', () => stop(143));
    process.once('SIGHUP', () => stop(129));
    process.once('SIGINT', () => stop(130));
    void server.connect(transport);
  });
}
