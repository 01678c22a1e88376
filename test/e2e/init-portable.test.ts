/**
 * `agent-bus init` a team can commit: the files it writes for every client hold nothing of this
 * machine (no absolute path, no home folder, no AGENT_BUS_REPO, no agent named outright), with
 * agent-bus on PATH and with --bin-path (whose path goes only in a personal, git-ignored file);
 * who a session is comes at run time from the folder it runs in; the repo is on the roster at once,
 * so mail to it waits for its first session; doctor counts it; outside a repo nothing is written.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { parse as parseJsonc } from 'jsonc-parser';
import { parse as parseToml } from 'smol-toml';
import { filesUnder, json, readAudit, ROOT, runCli, tempBus, type TempBus } from '../helpers/bus-env.js';
import { agentBusOnPath } from '../helpers/on-path.js';
import { pathWithoutAgentBus } from '../helpers/clean-path.js';

const ALL = ['claude', 'codex', 'gemini', 'copilot', 'opencode', 'agy', 'qwen'];
/** `claude --version` answers 2.1.332: the wake hook is written too. */
const FAKE_CLAUDE = join(ROOT, 'test', 'helpers', 'fake-claude.sh');

/** A git repo (a real one: init asks git what it ignores) under the bus's folder. */
function gitRepo(bus: TempBus, ...parts: string[]): string {
  const path = join(bus.dir, ...parts);
  mkdirSync(path, { recursive: true });
  assert.equal(spawnSync('git', ['init', '-q', path]).status, 0);
  return path;
}

/** The bus's environment with agent-bus on PATH, as an installed one is. */
function onPath(bus: TempBus): NodeJS.ProcessEnv {
  return { ...bus.env, PATH: agentBusOnPath(bus.dir).PATH, AGENT_BUS_CLAUDE_BIN: FAKE_CLAUDE };
}

/** Every file init wrote under the repo (git's own folder left out), by relative path. */
function written(repo: string): Map<string, string> {
  return new Map(filesUnder(repo, ['.git']).map((file) => [relative(repo, file), readFileSync(file, 'utf8')]));
}

/** Every string value in a config file's text: JSON (with comments), TOML, or the opencode plugin's literals. */
function stringsOf(path: string, text: string): string[] {
  const found: string[] = [];
  const walk = (value: unknown): void => {
    if (typeof value === 'string') found.push(value);
    else if (Array.isArray(value)) value.forEach(walk);
    else if (value !== null && typeof value === 'object') Object.values(value).forEach(walk);
  };
  if (path.endsWith('.toml')) walk(parseToml(text));
  else if (path.endsWith('.js')) for (const match of text.matchAll(/^const [A-Z_]+ = ("(?:[^"\\]|\\.)*"|null);$/gm)) walk(JSON.parse(match[1] as string));
  else if (path === '.agent-bus-name') found.push(text.trim());
  else walk(parseJsonc(text));
  return found;
}

/** What makes a committed file this machine's: an absolute path as a value, the home folder, the repo's path, or the agent named outright. */
function machineSpecific(repo: string, home: string, path: string, text: string): string[] {
  const problems: string[] = [];
  for (const value of stringsOf(path, text)) if (value.startsWith('/')) problems.push(`${path}: a string value is an absolute path: ${value}`);
  for (const needle of [home, repo, '$HOME', '${HOME}', '~/', 'AGENT_BUS_REPO', ROOT]) {
    if (text.includes(needle)) problems.push(`${path} holds ${needle}`);
  }
  // A name set outright pins every session to it; passing the variable through (Codex's env_vars) sets none.
  if (/AGENT_BUS_NAME"?\s*[=:]/.test(text)) problems.push(`${path} sets AGENT_BUS_NAME`);
  return problems;
}

/** Whether git would commit the file (it is not ignored). */
function committed(repo: string, path: string): boolean {
  return spawnSync('git', ['check-ignore', '-q', '--', path], { cwd: repo }).status !== 0;
}

/** An MCP session with the server as a config file starts it: its command and arguments, in the repo, with the client's environment. */
async function startServer(command: string, args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<{ whoami(): Promise<string>; read(): Promise<Array<{ body: string }>>; close(): Promise<void> }> {
  const transport = new StdioClientTransport({ command, args, env: env as Record<string, string>, cwd, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const client = new Client({ name: 'init-portable-tests', version: '1.0.0' });
  try {
    await client.connect(transport);
  } catch (error) {
    throw new Error(`${command} ${args.join(' ')} did not start: ${(error as Error).message}: ${stderr}`);
  }
  const call = async <T>(name: string, args2: Record<string, unknown> = {}): Promise<T> => {
    const result = await client.callTool({ name, arguments: args2 });
    const text = (result.content as Array<{ text: string }>)[0]?.text ?? '';
    if (result.isError) throw new Error(`${name}: ${text}`);
    return JSON.parse(text) as T;
  };
  return {
    // The client's address: a session holds one of its own under it (shop/claude-1).
    whoami: async () => {
      const me = await call<{ name: string; client_address: string | null }>('whoami');
      return me.client_address ?? me.name;
    },
    read: () => call<Array<{ body: string }>>('read_inbox'),
    close: () => client.close(),
  };
}

/** Each client's MCP server as its config says to start it: command, arguments, and the env block if any. */
function serverOf(repo: string, client: string): { command: string; args: string[]; env: Record<string, string> } {
  const read = (path: string): Record<string, any> => parseJsonc(readFileSync(join(repo, path), 'utf8')) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  switch (client) {
    case 'claude':
      return { env: {}, ...read('.mcp.json').mcpServers['agent-bus'] };
    case 'codex': {
      const server = (parseToml(readFileSync(join(repo, '.codex', 'config.toml'), 'utf8')) as { mcp_servers: Record<string, { command: string; args: string[]; env?: Record<string, string> }> }).mcp_servers['agent-bus'];
      assert.ok(server);
      return { command: server.command, args: server.args, env: server.env ?? {} };
    }
    case 'gemini':
      return { env: {}, ...read('.gemini/settings.json').mcpServers['agent-bus'] };
    case 'copilot':
      return { env: {}, ...read('.github/mcp.json').mcpServers['agent-bus'] };
    case 'qwen':
      return { env: {}, ...read('.qwen/settings.json').mcpServers['agent-bus'] };
    case 'opencode': {
      const entry = read('.opencode/opencode.json').mcp['agent-bus'] as { command: string[]; environment?: Record<string, string> };
      return { command: entry.command[0] as string, args: entry.command.slice(1), env: entry.environment ?? {} };
    }
    default:
      return { env: {}, ...read('.agents/plugins/agent-bus/mcp_config.json').mcpServers['agent-bus'] };
  }
}

test('with agent-bus on PATH, every client\'s committed files run the bare agent-bus and hold nothing of this machine', () => {
  const bus = tempBus();
  try {
    const repo = gitRepo(bus, 'work', 'shop');
    const env = onPath(bus);
    const wired = runCli(['init', '--clients', ALL.join(',')], { env, cwd: repo });
    assert.equal(wired.code, 0, wired.stderr);
    const files = written(repo);
    // Each client's files are there, and none is personal: nothing of this machine needed saying.
    for (const path of ['.mcp.json', '.claude/settings.json', '.codex/config.toml', '.codex/hooks.json', '.gemini/settings.json', '.github/mcp.json', '.github/hooks/agent-bus.json', '.opencode/opencode.json', '.opencode/plugins/agent-bus.js', '.agents/plugins/agent-bus/mcp_config.json', '.agents/plugins/agent-bus/hooks.json']) {
      assert.ok(files.has(path), `${path} written`);
    }
    assert.ok(!files.has('.claude/settings.local.json'), 'no personal file without a path of this machine to keep');
    assert.ok(!files.has('.agent-bus-name'), "the folder's name is the repo's: no pin");
    for (const [path, text] of files) {
      assert.deepEqual(machineSpecific(repo, env.HOME as string, path, text), [], path);
      assert.ok(committed(repo, path), `${path} is a file git commits`);
    }
    // The commands are the bare agent-bus, each hook and server told its client.
    assert.deepEqual(serverOf(repo, 'claude'), { command: 'agent-bus', args: ['serve', '--client', 'claude'], env: {}, description: 'Auto-generated by `agent-bus init`. Safe to regenerate; safe to delete to opt this repo out.' });
    for (const client of ALL) assert.deepEqual([serverOf(repo, client).command, ...serverOf(repo, client).args], ['agent-bus', 'serve', '--client', client], client);
    assert.match(files.get('.claude/settings.json') ?? '', /"command": "agent-bus hook-user-prompt --client claude \|\| true"/);
    assert.match(files.get('.opencode/plugins/agent-bus.js') ?? '', /^const BIN = "agent-bus";$/m);
  } finally {
    bus.cleanup();
  }
});

test('with --bin-path, the path lands only in Claude Code\'s personal file, which git ignores; the committed files do not hold it; every other client says it has none', () => {
  const bus = tempBus();
  try {
    const repo = gitRepo(bus, 'work', 'shop');
    const env: NodeJS.ProcessEnv = { ...bus.env, AGENT_BUS_CLAUDE_BIN: FAKE_CLAUDE };
    const machine = join(bus.dir, 'opt', 'agent-bus', 'bin', 'agent-bus');
    const wired = runCli(['init', '--clients', ALL.join(','), '--bin-path', machine], { env, cwd: repo });
    assert.equal(wired.code, 0, wired.stderr);
    const files = written(repo);
    const holding = [...files].filter(([, text]) => text.includes(machine)).map(([path]) => path);
    assert.deepEqual(holding, ['.claude/settings.local.json'], 'the machine path is in the personal file alone');
    assert.deepEqual(JSON.parse(files.get('.claude/settings.local.json') ?? '{}'), { env: { AGENT_BUS_BIN: machine } });
    assert.equal(committed(repo, '.claude/settings.local.json'), false, 'git ignores the personal file');
    assert.match(readFileSync(join(repo, '.git', 'info', 'exclude'), 'utf8'), /^\/\.claude\/settings\.local\.json$/m, 'through the repo\'s own exclude file, not the team\'s .gitignore');
    assert.ok(!files.has('.gitignore'));
    for (const [path, text] of files) {
      if (path === '.claude/settings.local.json') continue;
      assert.deepEqual(machineSpecific(repo, env.HOME as string, path, text), [], path);
      assert.ok(committed(repo, path), `${path} is a file git commits`);
    }
    // The output says which file took it, and that the other clients have none.
    assert.match(wired.stdout, new RegExp(`claude: this machine's agent-bus, ${machine}, is in \\.claude/settings\\.local\\.json \\(personal, not committed\\)`));
    assert.match(wired.stdout, /create {5}\.claude\/settings\.local\.json {2}\(claude, personal: not committed\)/);
    assert.match(wired.stdout, /^\.claude\/settings\.local\.json: git ignores it now \(\.git\/info\/exclude\)$/m);
    for (const name of ['Codex', 'Gemini CLI', 'Copilot CLI', 'opencode', 'Antigravity CLI']) {
      assert.match(wired.stdout, new RegExp(`${name} reads no personal file in the repo, so its committed files run \`agent-bus\` from PATH`), name);
    }
    // A second run without --bin-path keeps what the personal file says; --bin-path agent-bus takes it out again.
    const again = runCli(['init', '--clients', ALL.join(',')], { env, cwd: repo });
    assert.match(again.stdout, /nothing to do\./);
    assert.deepEqual(written(repo), files, 'unchanged');
    // A teammate's machine, with no personal file and agent-bus on PATH: its init leaves the committed files as they are.
    const personal = join(repo, '.claude', 'settings.local.json');
    rmSync(personal);
    const teammate = runCli(['init', '--clients', ALL.join(',')], { env: onPath(bus), cwd: repo });
    assert.equal(teammate.code, 0, teammate.stderr);
    for (const [path, text] of files) if (path !== '.claude/settings.local.json') assert.equal(readFileSync(join(repo, path), 'utf8'), text, `${path} does not change with the machine`);
    writeFileSync(personal, files.get('.claude/settings.local.json') ?? '');
    assert.equal(runCli(['init', '--clients', 'claude', '--bin-path', 'agent-bus'], { env, cwd: repo }).code, 0);
    assert.deepEqual(JSON.parse(readFileSync(join(repo, '.claude', 'settings.local.json'), 'utf8')), {});
    assert.equal(serverOf(repo, 'claude').command, 'agent-bus', 'back to the bare command');
  } finally {
    bus.cleanup();
  }
});

test('the committed wiring speaks as <repo>/<client> at run time, from the folder alone: every client\'s server as its config starts it, and a hook from a subfolder', async () => {
  const bus = tempBus();
  try {
    const repo = gitRepo(bus, 'work', 'shop');
    const env = onPath(bus);
    assert.equal(runCli(['init', '--clients', ALL.join(',')], { env, cwd: repo }).code, 0);
    // A client's environment: nothing of agent-bus's naming, only where the bus is and the PATH.
    const clientEnv = { PATH: env.PATH, HOME: env.HOME, AGENT_BUS_DB: env.AGENT_BUS_DB, AGENT_BUS_AUDIT_LOG: env.AGENT_BUS_AUDIT_LOG, ...(env.AGENT_BUS_HOME ? { AGENT_BUS_HOME: env.AGENT_BUS_HOME } : {}) };
    assert.equal(clientEnv.AGENT_BUS_DB !== undefined && !('AGENT_BUS_NAME' in clientEnv) && !('AGENT_BUS_REPO' in clientEnv), true);
    for (const client of ALL) {
      const { command, args, env: block } = serverOf(repo, client);
      const server = await startServer(command, args, { ...clientEnv, ...block }, repo);
      try {
        assert.equal(await server.whoami(), `shop/${client}`, client);
      } finally {
        await server.close();
      }
    }
    // Claude Code's hook, run as written from a subfolder (the payload's cwd): mail to the repo reaches it.
    assert.equal(runCli(['send', 'to the whole repo', '--to', 'shop'], { env: bus.env }).code, 0);
    const sub = join(repo, 'src', 'deep');
    mkdirSync(sub, { recursive: true });
    const settings = JSON.parse(readFileSync(join(repo, '.claude', 'settings.json'), 'utf8')) as { hooks: Record<string, Array<{ hooks: Array<{ command: string }> }>> };
    const command = settings.hooks.UserPromptSubmit?.[0]?.hooks[0]?.command ?? '';
    const ran = spawnSync('sh', ['-c', command], { env: clientEnv, cwd: sub, input: JSON.stringify({ session_id: 'cc-1', cwd: sub, hook_event_name: 'UserPromptSubmit', prompt: 'hi' }), encoding: 'utf8' });
    assert.equal(ran.status, 0, ran.stderr);
    assert.match(ran.stdout, /to the whole repo/);
    const read = bus.rows<{ to_agent: string; read_by: string | null }>("SELECT to_agent FROM messages WHERE body = 'to the whole repo' AND read_at IS NOT NULL");
    assert.equal(read.length, 1, 'read once, by the repo\'s claude');
  } finally {
    bus.cleanup();
  }
});

test('with --bin-path, Claude Code\'s committed server and hooks run this machine\'s agent-bus through the personal file, and the bare one without it', async () => {
  const bus = tempBus();
  try {
    const repo = gitRepo(bus, 'shop');
    const { bin } = agentBusOnPath(join(bus.dir, 'elsewhere'), '');
    assert.equal(runCli(['init', '--bin-path', bin], { env: { ...bus.env, AGENT_BUS_CLAUDE_BIN: FAKE_CLAUDE }, cwd: repo }).code, 0);
    const local = JSON.parse(readFileSync(join(repo, '.claude', 'settings.local.json'), 'utf8')) as { env: Record<string, string> };
    // Claude Code gives its hooks and servers the personal file's env; PATH has no agent-bus at all.
    const clientEnv = { PATH: '/usr/bin:/bin', HOME: bus.env.HOME, AGENT_BUS_DB: bus.env.AGENT_BUS_DB, AGENT_BUS_AUDIT_LOG: bus.env.AGENT_BUS_AUDIT_LOG, ...local.env };
    const { command, args } = serverOf(repo, 'claude');
    const nodeFolder = process.execPath.slice(0, process.execPath.lastIndexOf('/'));
    const server = await startServer(command, args, { ...clientEnv, PATH: `${nodeFolder}:/usr/bin:/bin` }, repo);
    try {
      assert.equal(await server.whoami(), 'shop/claude');
    } finally {
      await server.close();
    }
    assert.equal(runCli(['send', 'through the personal agent-bus', '--to', 'shop/claude'], { env: bus.env }).code, 0);
    const settings = JSON.parse(readFileSync(join(repo, '.claude', 'settings.json'), 'utf8')) as { hooks: Record<string, Array<{ hooks: Array<{ command: string }> }>> };
    const hook = settings.hooks.Stop?.[0]?.hooks[0]?.command ?? '';
    const ran = spawnSync('sh', ['-c', hook], { env: { ...clientEnv, PATH: `${nodeFolder}:/usr/bin:/bin` }, cwd: repo, input: JSON.stringify({ session_id: 'cc-1', cwd: repo, stop_hook_active: false }), encoding: 'utf8' });
    assert.equal(ran.status, 0, ran.stderr);
    assert.match((JSON.parse(ran.stdout) as { reason: string }).reason, /through the personal agent-bus/);
  } finally {
    bus.cleanup();
  }
});

test('a freshly wired repo is reachable before its first session: mail to <repo> and <repo>/<client> waits, and the first session reads it', async () => {
  const bus = tempBus();
  try {
    const repo = gitRepo(bus, 'shop');
    const env = onPath(bus);
    const wired = runCli(['init', '--clients', 'claude,codex'], { env, cwd: repo });
    assert.equal(wired.code, 0, wired.stderr);
    assert.match(wired.stdout, /^On the bus: shop\/claude, shop\/codex \(mail to them, or to shop, waits for the first session\)\.$/m);
    // On the roster at once, audited as roster changes are.
    const registered = readAudit(bus.audit).filter((row) => row.op === 'register');
    assert.deepEqual(registered.map((row) => [row.actor, row.to]), [['agent-bus init', 'shop/claude'], ['agent-bus init', 'shop/codex'], ['agent-bus init', 'human']]);
    assert.match(String(registered[0]?.body_preview), /'shop\/claude' put on the roster for /);
    // The person is on the bus too, on a bus where nobody has spoken yet: an agent mails them and hands them a task.
    const mailed = runCli(['send', 'done with the review', '--to', 'human', '--name', 'shop/codex'], { env: bus.env, cwd: repo });
    assert.equal(mailed.code, 0, mailed.stderr);
    const handed = runCli(['task', 'add', 'approve the deploy', '--to', 'human', '--name', 'shop/codex'], { env: bus.env, cwd: repo });
    assert.equal(handed.code, 0, handed.stderr);
    // Mail to the repo and to a client: accepted, and waiting.
    for (const to of ['shop', 'shop/claude', 'shop/codex']) {
      const sent = runCli(['send', `for ${to}`, '--to', to], { env: bus.env });
      assert.equal(sent.code, 0, `${to}: ${sent.stderr}`);
    }
    const agents = json<Array<{ name: string; pending_count: number; repo_path: string }>>(runCli(['agents', '--json'], { env: bus.env }));
    const pending = Object.fromEntries(agents.filter((agent) => agent.name.startsWith('shop/')).map((agent) => [agent.name, agent.pending_count]));
    assert.deepEqual(pending, { 'shop/claude': 2, 'shop/codex': 2 }, 'each client sees its own mail and the repo\'s');
    assert.ok(agents.filter((agent) => agent.name.startsWith('shop/')).every((agent) => agent.repo_path === repo));
    // The first Claude Code session: its prompt hook, as written, from the repo's folder.
    const settings = JSON.parse(readFileSync(join(repo, '.claude', 'settings.json'), 'utf8')) as { hooks: Record<string, Array<{ hooks: Array<{ command: string }> }>> };
    const prompt = settings.hooks.UserPromptSubmit?.[0]?.hooks[0]?.command ?? '';
    const ran = spawnSync('sh', ['-c', prompt], { env: { ...env }, cwd: repo, input: JSON.stringify({ session_id: 'cc-1', cwd: repo, hook_event_name: 'UserPromptSubmit', prompt: 'hi' }), encoding: 'utf8' });
    assert.equal(ran.status, 0, ran.stderr);
    assert.match(ran.stdout, /for shop\/claude/);
    assert.match(ran.stdout, /: for shop$/m, "and the repo's mail, claimed by the first to see it");
    // The first Codex session: its model reads the mail through the server, as .codex/config.toml starts it.
    const { command, args } = serverOf(repo, 'codex');
    const server = await startServer(command, args, { PATH: env.PATH, HOME: env.HOME, AGENT_BUS_DB: env.AGENT_BUS_DB, AGENT_BUS_AUDIT_LOG: env.AGENT_BUS_AUDIT_LOG, ...(env.AGENT_BUS_HOME ? { AGENT_BUS_HOME: env.AGENT_BUS_HOME } : {}) }, repo);
    try {
      assert.ok((await server.read()).some((message) => message.body === 'for shop/codex'), 'its own mail waited for it');
    } finally {
      await server.close();
    }
  } finally {
    bus.cleanup();
  }
});

test('doctor counts a freshly wired repo as wired, each client in place, before any session', () => {
  const bus = tempBus();
  try {
    const repo = gitRepo(bus, 'shop');
    const env = onPath(bus);
    assert.equal(runCli(['init', '--clients', 'claude,codex,gemini'], { env, cwd: repo }).code, 0);
    const report = json<{ checks: Array<{ check: string; level: string; detail: string }> }>(runCli(['doctor', '--json'], { env }));
    const wiring = report.checks.filter((finding) => finding.check === 'wiring');
    assert.deepEqual(
      wiring.map((finding) => [finding.level, finding.detail]),
      ['claude', 'codex', 'gemini'].map((client) => ['ok', `shop/${client} (${client} in ${repo}): server and hooks in place (command hooks)`]),
    );
    // Without agent-bus on PATH, the committed files cannot start it here: said, with the fix.
    const run = runCli(['doctor', '--json'], { env: { ...env, PATH: pathWithoutAgentBus() } });
    assert.equal(run.code, 1);
    const bare = JSON.parse(run.stdout) as { checks: Array<{ check: string; level: string; detail: string; fix?: string }> };
    const codex = bare.checks.find((finding) => finding.check === 'wiring' && finding.detail.startsWith('shop/codex'));
    assert.equal(codex?.level, 'fail');
    assert.match(codex?.detail ?? '', /its files run agent-bus, which is not on PATH here/);
    assert.match(codex?.fix ?? '', /npm install -g agent-bus/);
  } finally {
    bus.cleanup();
  }
});

test('init outside a git repo, with no path given, exits 1, names the folder and what to do, and writes nothing', () => {
  const bus = tempBus();
  try {
    const folder = join(bus.dir, 'not-a-repo');
    mkdirSync(folder);
    const result = runCli(['init', '--clients', 'claude,codex'], { env: onPath(bus), cwd: folder });
    assert.equal(result.code, 1);
    assert.equal(result.stdout, '');
    assert.equal(result.stderr, `agent-bus: no git repository at ${folder} or above it: run git init there first, or give the repo's path (agent-bus init PATH)\n`);
    assert.deepEqual(readdirSync(folder), [], 'nothing written there');
    assert.ok(!existsSync(bus.folder), 'no bus opened or made');
    // A path given that is not a repo: the plan says so, and the exit is 1 too.
    const given = runCli(['init', folder], { env: onPath(bus), cwd: bus.dir });
    assert.equal(given.code, 1);
    assert.match(given.stdout, /skip-not-repo/);
    assert.equal(given.stderr, `agent-bus: ${folder} is not a git repository: run git init there first, or give a repo's path\n`);
    assert.deepEqual(readdirSync(folder), []);
    // From a subfolder of a repo, the repo is wired (its git top level).
    const repo = gitRepo(bus, 'shop');
    mkdirSync(join(repo, 'src'));
    assert.equal(runCli(['init'], { env: onPath(bus), cwd: join(repo, 'src') }).code, 0);
    assert.ok(existsSync(join(repo, '.mcp.json')) && !existsSync(join(repo, 'src', '.mcp.json')));
  } finally {
    bus.cleanup();
  }
});

test('init says the next step: the clients wired, how to start one there, agents and doctor', () => {
  const bus = tempBus();
  try {
    const repo = gitRepo(bus, 'shop');
    const env = onPath(bus);
    const result = runCli(['init', '--clients', 'claude,codex'], { env, cwd: repo });
    assert.equal(result.code, 0, result.stderr);
    const home = env.HOME as string;
    const shown = repo.startsWith(`${home}/`) ? `~${repo.slice(home.length)}` : repo;
    const tail = result.stdout.slice(result.stdout.indexOf('Wired shop'));
    const width = `cd ${shown} && claude`.length;
    assert.equal(
      tail,
      [
        'Wired shop for Claude Code, Codex. Next:',
        `  ${`cd ${shown} && claude`.padEnd(width)}   start Claude Code there (or codex)`,
        `  ${'agent-bus agents'.padEnd(width)}   see who is on the bus`,
        `  ${'agent-bus doctor'.padEnd(width)}   check the wiring`,
        '',
      ].join('\n'),
    );
    assert.doesNotMatch(result.stdout, /not on PATH/, 'agent-bus is on PATH here');
    // Without agent-bus on PATH, init says the clients will not find it.
    const bare = runCli(['init', '--clients', 'claude'], { env: { ...env, PATH: pathWithoutAgentBus() }, cwd: repo });
    assert.match(bare.stdout, /^note: agent-bus is not on PATH here, and the wired clients run it: install it \(npm install -g agent-bus\), or \(for Claude Code\) re-run with --bin-path PATH$/m);
  } finally {
    bus.cleanup();
  }
});

test('a name init chooses (--name, --prefix) is pinned in the committed .agent-bus-name, and every session finds it there; a new name retires the old', async () => {
  const bus = tempBus();
  try {
    const repo = gitRepo(bus, 'shop');
    const env = onPath(bus);
    const named = runCli(['init', '--clients', 'claude,codex', '--name', 'Web Shop'], { env, cwd: repo });
    assert.equal(named.code, 0, named.stderr);
    assert.match(named.stdout, /create {5}\.agent-bus-name {2}\(the repo's name\)/);
    assert.equal(readFileSync(join(repo, '.agent-bus-name'), 'utf8'), 'web-shop\n');
    for (const [path, text] of written(repo)) assert.deepEqual(machineSpecific(repo, env.HOME as string, path, text), [], path);
    const { command, args } = serverOf(repo, 'codex');
    const clientEnv = { PATH: env.PATH, HOME: env.HOME, AGENT_BUS_DB: env.AGENT_BUS_DB, AGENT_BUS_AUDIT_LOG: env.AGENT_BUS_AUDIT_LOG, ...(env.AGENT_BUS_HOME ? { AGENT_BUS_HOME: env.AGENT_BUS_HOME } : {}) };
    const server = await startServer(command, args, clientEnv, repo);
    try {
      assert.equal(await server.whoami(), 'web-shop/codex');
    } finally {
      await server.close();
    }
    // Mail for the old name follows the new one.
    assert.equal(runCli(['send', 'before the rename', '--to', 'web-shop/claude'], { env: bus.env }).code, 0);
    const renamed = runCli(['init', '--clients', 'claude,codex', '--name', 'storefront'], { env, cwd: repo });
    assert.equal(renamed.code, 0, renamed.stderr);
    assert.match(renamed.stdout, /renaming from 'web-shop\/claude' to 'storefront\/claude'/);
    assert.equal(readFileSync(join(repo, '.agent-bus-name'), 'utf8'), 'storefront\n');
    const names = json<Array<{ name: string }>>(runCli(['agents', '--json'], { env: bus.env })).map((agent) => agent.name).filter((name) => name !== 'human');
    assert.deepEqual(names.sort(), ['storefront/claude', 'storefront/codex']);
    const inbox = json<Array<{ body: string }>>(runCli(['inbox', '--name', 'storefront/claude', '--json'], { env: bus.env }));
    assert.deepEqual(inbox.map((message) => message.body), ['before the rename']);
    // --prefix is pinned the same way.
    const other = gitRepo(bus, 'api');
    assert.equal(runCli(['init', '--prefix', 'acme'], { env, cwd: other }).code, 0);
    assert.equal(readFileSync(join(other, '.agent-bus-name'), 'utf8'), 'acme-api\n');
  } finally {
    bus.cleanup();
  }
});

test('re-running init over an older init\'s wiring replaces the machine paths and names it owned, and keeps what is not its own', () => {
  const bus = tempBus();
  try {
    const repo = gitRepo(bus, 'shop');
    const env = onPath(bus);
    const old = '/usr/local/lib/node_modules/agent-bus/dist/bin/cli.cjs';
    mkdirSync(join(repo, '.claude'));
    writeFileSync(join(repo, '.mcp.json'), JSON.stringify({ mcpServers: { mine: { command: 'my-server' }, 'agent-bus': { command: old, args: ['serve'], env: { AGENT_BUS_NAME: 'shop/claude', AGENT_BUS_REPO: repo }, description: 'Auto-generated by `agent-bus init`. Safe to regenerate; safe to delete to opt this repo out.' } } }));
    writeFileSync(
      join(repo, '.claude', 'settings.json'),
      JSON.stringify({
        model: 'opus',
        hooks: { Stop: [{ matcher: '', hooks: [{ type: 'command', command: 'say done' }] }, { matcher: '', hooks: [{ type: 'command', command: `AGENT_BUS_NAME=shop/claude ${old} hook-stop --client claude || true` }] }] },
        statusLine: { type: 'command', command: `AGENT_BUS_NAME=shop/claude ${old} statusline --client claude` },
      }),
    );
    mkdirSync(join(repo, '.codex'));
    writeFileSync(join(repo, '.codex', 'config.toml'), `model = "o3"\n\n# >>> agent-bus: managed by \`agent-bus init\`, regenerated on every run >>>\n[mcp_servers.agent-bus]\ncommand = "${old}"\nargs = ["serve"]\n\n[mcp_servers.agent-bus.env]\nAGENT_BUS_NAME = "shop/codex"\nAGENT_BUS_REPO = "${repo}"\n# <<< agent-bus <<<\n`);
    const result = runCli(['init', '--clients', 'claude,codex'], { env, cwd: repo });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /Applied to 1 repo\(s\)\./);
    const files = written(repo);
    for (const [path, text] of files) assert.deepEqual(machineSpecific(repo, env.HOME as string, path, text), [], path);
    const mcp = JSON.parse(files.get('.mcp.json') ?? '{}') as { mcpServers: Record<string, unknown> };
    assert.deepEqual(mcp.mcpServers.mine, { command: 'my-server' });
    const settings = JSON.parse(files.get('.claude/settings.json') ?? '{}') as { model: string; hooks: Record<string, Array<{ hooks: Array<{ command: string }> }>> };
    assert.equal(settings.model, 'opus');
    assert.deepEqual(settings.hooks.Stop?.map((group) => group.hooks[0]?.command), ['say done', 'agent-bus hook-stop --client claude || true', 'agent-bus hook-watch --client claude --max-seconds 86400 ; [ $? -ne 10 ] || exit 2']);
    assert.match(files.get('.codex/config.toml') ?? '', /^model = "o3"\n/);
    assert.doesNotMatch(files.get('.codex/config.toml') ?? '', /AGENT_BUS_NAME"?\s*[=:]|AGENT_BUS_REPO/);
    assert.ok(!files.has('.agent-bus-name'), 'the names were the folder\'s: nothing to pin');
  } finally {
    bus.cleanup();
  }
});
