/**
 * What the real-client tests share: a client run with a hard timeout, a repo wired by our init, the
 * notices the notice scenarios publish, and the honesty check of receipts against what a model saw.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ReceiptWay } from '../../src/model/receipts.js';
import { agentEnv, register } from '../helpers/agents.js';
import { json as cliJson, ROOT, runCli, tempBus, type TempBus } from '../helpers/bus-env.js';
import { agentBusOnPath } from '../helpers/on-path.js';

/** Where the pinned real clients are installed (npm run test:clients). */
export const CLIENT_BIN = join(ROOT, 'clients', 'node_modules', '.bin');
/**
 * opencode 1.x, by its own package's binary: `@opencode/cli` (2.x) installs a binary of the same
 * name, so `.bin/opencode` may be either.
 */
export const OPENCODE1_BIN = join(ROOT, 'clients', 'node_modules', 'opencode-ai', 'bin', 'opencode.exe');
/** opencode 2, by its own package's binary (`@opencode/cli`). */
export const OPENCODE2_BIN = join(ROOT, 'clients', 'node_modules', '@opencode', 'cli', 'bin', 'opencode.exe');

/**
 * The client executables init asks for their versions, as it would on a user's machine: the real Claude
 * Code and Codex (the wake hook is wired too, and both get the hooks their session's server answers),
 * and opencode 1.x unless a driver names another (`AGENT_BUS_OPENCODE_BIN`).
 */
export function initVersions(env: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { AGENT_BUS_CLAUDE_BIN: join(CLIENT_BIN, 'claude'), AGENT_BUS_CODEX_BIN: join(CLIENT_BIN, 'codex'), AGENT_BUS_OPENCODE_BIN: OPENCODE1_BIN, ...env };
}

export interface FakeServer {
  url: string;
  /** Bodies of the model requests, in order. */
  requests: string[];
  close(): Promise<void>;
}

export interface ClientRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Run a client binary to completion, killed by its PID if it outlives `timeoutMs`. */
export function runClient(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv, timeoutMs = 120_000): Promise<ClientRun> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.pid && process.kill(child.pid, 'SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

export interface WiredRepo {
  bus: TempBus;
  repo: string;
}

/**
 * A git repo named `shop`, wired for `clients` by our own `agent-bus init` with agent-bus on PATH
 * (as an installed one is: the committed files run the bare command), on a private bus where the
 * human is already known. Init itself puts each `shop/<client>` on the roster, so mail to any of
 * them is accepted before a client starts.
 */
export function wiredRepo(...clients: string[]): WiredRepo {
  return wiredRepoWith({}, ...clients);
}

/**
 * wiredRepo, with the kind of hook init is asked for (--hooks: command hooks, as an older client gets),
 * and `env` for init (which client executables it asks for their versions).
 */
export function wiredRepoWith(options: { hooks?: 'command' | 'mcp'; env?: NodeJS.ProcessEnv }, ...clients: string[]): WiredRepo {
  const hookKind = options.hooks === undefined ? [] : ['--hooks', options.hooks];
  const bus = tempBus();
  bus.env.PATH = agentBusOnPath(bus.dir).PATH;
  const repo = join(bus.dir, 'shop');
  mkdirSync(repo);
  // Codex trusts a project only inside a real git repository; the others accept one too.
  assert.equal(spawnSync('git', ['init', '-q', repo]).status, 0);
  const versions = initVersions(options.env);
  const init = runCli(['init', '--clients', clients.join(','), ...hookKind], { env: { ...bus.env, ...versions }, cwd: repo });
  assert.equal(init.code, 0, init.stderr);
  assert.match(init.stdout, new RegExp(`^On the bus: ${clients.map((client) => `shop/${client}`).join(', ')} `, 'm'));
  register(agentEnv(bus, 'human', bus.dir));
  return { bus, repo };
}

/** End an interactive session's test: the client, the scripted model, then the bus's temp folder. */
export async function endInteractive(s: WiredRepo, session: { stop(): Promise<void> } | undefined, model: { close(): Promise<void> }): Promise<void> {
  await session?.stop();
  await model.close();
  try {
    s.bus.cleanup();
  } catch {
    // A straggler still writing: the temp folder goes with the machine's.
  }
}

/** Give the MCP server init wrote for Claude Code `env` on top of what Claude Code gives it (.mcp.json's env block). */
export function serverEnv(s: WiredRepo, env: Record<string, string>): void {
  const path = join(s.repo, '.mcp.json');
  const config = JSON.parse(readFileSync(path, 'utf8')) as { mcpServers: Record<string, { env?: Record<string, string> }> };
  const server = config.mcpServers['agent-bus'];
  assert.ok(server, 'init wrote the agent-bus server');
  server.env = { ...server.env, ...env };
  writeFileSync(path, JSON.stringify(config, null, 2));
}

/** Markers of the three notices `publishTestNotices` puts on the bus. */
export const NOTICE_MARKERS = { critical: 'CRITICAL-NOTICE-MARKER', info: 'INFO-NOTICE-MARKER', unsubscribed: 'UNSUBSCRIBED-NOTICE-MARKER' } as const;

/**
 * A critical notice on `amygdala` and an info one on `brain` (the two channels
 * init subscribes a repo to), and a critical one on `ops`, which it does not.
 */
export function publishTestNotices(bus: TempBus): void {
  for (const [channel, message, severity] of [
    ['amygdala', NOTICE_MARKERS.critical, 'critical'],
    ['brain', NOTICE_MARKERS.info, 'info'],
    ['ops', NOTICE_MARKERS.unsubscribed, 'critical'],
  ]) {
    const published = runCli(['channel', 'publish', channel as string, message as string, '-s', severity as string], { env: bus.env });
    assert.equal(published.code, 0, published.stderr);
  }
}

// ------------------------------------------------------------------ receipts against what the model saw

/**
 * A mail body no model request can hold by accident: `label`, a random token, and what a hook must
 * carry through unchanged: a quote and a backslash (escaped in the request's JSON) and a second line
 * (indented by the hook under the first).
 */
export function mailBody(label: string): string {
  return `${label}-${randomBytes(6).toString('hex')} "quoted" \\ and\nits second line`;
}

/** Runs of whitespace as one space: a hook indents a body's later lines, and a client may wrap them. */
function squashed(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

const ESCAPES: Record<string, string> = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

/** `text` with JSON's string escapes undone wherever they are: JSON a client embeds in text ("Output:\n{...}") included. */
function unescaped(text: string): string {
  return text.replace(/\\(?:u([0-9a-fA-F]{4})|(.))/g, (whole, hex: string | undefined, char: string | undefined) => {
    if (hex !== undefined) return String.fromCharCode(parseInt(hex, 16));
    if (char === undefined) return whole;
    return ESCAPES[char] ?? char;
  });
}

/**
 * A request's raw text and every string inside its JSON, and inside JSON held in those strings (a
 * hook's output, a tool's result), each also with JSON's escapes undone once and twice (JSON in
 * text in JSON).
 */
function textsOf(raw: string): string[] {
  const texts = [raw];
  const walk = (value: unknown, depth: number): void => {
    if (typeof value === 'string') {
      texts.push(value);
      if (depth < 6 && /^\s*[[{]/.test(value)) {
        try {
          walk(JSON.parse(value), depth + 1);
        } catch {
          // Text that only starts like JSON.
        }
      }
    } else if (Array.isArray(value)) {
      for (const item of value) walk(item, depth);
    } else if (value !== null && typeof value === 'object') {
      for (const item of Object.values(value)) walk(item, depth);
    }
  };
  try {
    walk(JSON.parse(raw), 0);
  } catch {
    // Not JSON: the raw text is all there is.
  }
  return texts.flatMap((text) => {
    const once = unescaped(text);
    return once === text ? [text] : [text, once, unescaped(once)];
  });
}

/** Whether some recorded model request holds `body`: in its raw text or, unescaped, in a string of its JSON (whitespace runs as one space). */
export function modelSaw(body: string, requests: readonly string[]): boolean {
  const needle = squashed(body);
  return needle !== '' && requests.some((raw) => textsOf(raw).some((text) => squashed(text).includes(needle)));
}

/** The ways that put mail in front of a model: the hooks, the watcher, the model's read_inbox tool call. */
export const MODEL_WAYS: readonly ReceiptWay[] = ['hook-user-prompt', 'hook-stop', 'hook-pre-tool', 'hook-watch', 'read_inbox'];

/** One copy's receipt as `agent-bus status ID --json` prints it. */
interface CopyReceipt {
  message_id: string;
  to: string;
  state: string;
  delivered_at: string | null;
  delivered_via: string | null;
  read_at: string | null;
  read_via: string | null;
}

export interface HonestyExpectations {
  /**
   * Mail the model must have been shown, by body, with the way its receipt must name for the
   * delivery (and for the read, when it is known: null for a peek that only delivered).
   */
  delivered?: Array<{ body: string; via: ReceiptWay; readVia?: ReceiptWay | null }>;
  /** The test sends this agent no mail a model could be shown: the check finding none is not a pass by default. */
  noneExpected?: boolean;
}

/**
 * The honesty check, run once a client's run has ended: every copy addressed to `agent` (a client
 * address such as `shop/claude`: its own copies, its sessions' `shop/claude-N`, the repo-wide
 * copies it got, and mail waiting at its bare repo name) is read from `bus`'s store, its receipt
 * through the real CLI (`agent-bus status ID --json`), and for each copy delivered by a
 * model-facing way or not at all, the receipt says delivered exactly when some request the fake
 * model recorded holds the copy's body. Copies a person's surface delivered (inbox, chat, web) are
 * left out: a test may read an agent's inbox with the CLI on purpose. It fails when it checked
 * nothing, unless `expect.noneExpected`, so it never passes for want of mail.
 */
export function assertReceiptsHonest(bus: TempBus, agent: string, requests: readonly string[], expect: HonestyExpectations = {}): void {
  const repo = agent.split('/')[0] as string;
  const ours = (to: string): boolean => to === agent || to.startsWith(`${agent}-`) || to === repo;
  const copies = bus
    .rows<{ message_id: string; to_agent: string; body: string }>('SELECT message_id, to_agent, body FROM messages ORDER BY sent_at, message_id')
    .filter((row) => ours(row.to_agent));
  const checked: Array<{ id: string; body: string; receipt: CopyReceipt; saw: boolean }> = [];
  const lies: string[] = [];
  for (const copy of copies) {
    const status = cliJson<{ copies: CopyReceipt[] }>(runCli(['status', copy.message_id, '--json'], { env: bus.env }));
    const receipt = status.copies.find((entry) => entry.message_id === copy.message_id);
    assert.ok(receipt, `agent-bus status ${copy.message_id} shows no copy with that id: ${JSON.stringify(status)}`);
    if (receipt.delivered_via !== null && !(MODEL_WAYS as readonly string[]).includes(receipt.delivered_via)) continue;
    const saw = modelSaw(copy.body, requests);
    checked.push({ id: copy.message_id, body: copy.body, receipt, saw });
    if ((receipt.delivered_at !== null) !== saw) {
      lies.push(
        `message ${copy.message_id} to ${receipt.to}, body ${JSON.stringify(copy.body)}: its receipt says ${receipt.state} ` +
          `(delivered_at ${receipt.delivered_at ?? 'null'} via ${receipt.delivered_via ?? 'null'}, read_at ${receipt.read_at ?? 'null'} via ${receipt.read_via ?? 'null'}), ` +
          `but the model ${saw ? 'saw it' : 'never saw it'} (${requests.length} model request(s) recorded)`,
      );
    }
  }
  assert.deepEqual(lies, [], `receipts that do not match what the model saw:\n${lies.join('\n')}`);
  // Distinct bodies must not hold one another, or "the request held its body" could be the other's.
  const bodies = [...new Set(checked.map((copy) => squashed(copy.body)))];
  for (const one of bodies) {
    for (const other of bodies) assert.ok(one === other || !other.includes(one), `the bodies ${JSON.stringify(one)} and ${JSON.stringify(other)} overlap: use unique tokens`);
  }
  if (expect.noneExpected) {
    assert.deepEqual(checked.map((copy) => copy.body), [], `no mail for ${agent} was expected in front of its model`);
    return;
  }
  assert.ok(checked.length > 0, `the honesty check found no copy addressed to ${agent} that a model could be shown (${copies.length} copies in all): it checked nothing`);
  for (const wanted of expect.delivered ?? []) {
    const found = checked.filter((copy) => copy.body === wanted.body);
    assert.ok(found.length > 0, `no copy to ${agent} with body ${JSON.stringify(wanted.body)} was checked`);
    for (const copy of found) {
      const { receipt } = copy;
      const seen = `message ${copy.id}, body ${JSON.stringify(copy.body)}, receipt ${JSON.stringify(receipt)}, model saw it: ${copy.saw}`;
      assert.ok(copy.saw, `the model was to be shown this mail: ${seen}`);
      assert.equal(receipt.delivered_via, wanted.via, `delivered by ${wanted.via}: ${seen}`);
      if (wanted.readVia !== undefined) assert.equal(receipt.read_via, wanted.readVia, `read by ${wanted.readVia ?? 'nothing yet'}: ${seen}`);
    }
  }
}
