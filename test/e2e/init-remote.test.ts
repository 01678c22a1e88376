/**
 * `agent-bus init --remote URL`: each client wired to a hub, with the token
 * left to $AGENT_BUS_TOKEN, never written; idempotent; local and remote wiring
 * replacing each other cleanly; and the wiring working against a real hub.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { parse as parseToml } from 'smol-toml';
import { filesUnder, runCli, tempBus, type TempBus, messageLines } from '../helpers/bus-env.js';
import { createToken, startHub } from '../helpers/hub.js';
import { connect } from '../helpers/mcp.js';
import { agentBusOnPath } from '../helpers/on-path.js';

const HUB = 'https://hub.example:8787';
const CLIENTS = 'claude,codex,opencode,agy,gemini,copilot';

function repo(bus: TempBus, name: string): string {
  const path = join(bus.dir, 'work', name);
  mkdirSync(join(path, '.git'), { recursive: true });
  return path;
}

/** Every file init wrote under a repo, by relative path. */
function written(path: string): Map<string, string> {
  return new Map(filesUnder(path, ['.git']).map((file) => [relative(path, file), readFileSync(file, 'utf8')]));
}

// The config files are read by shape in the assertions.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Parsed = Record<string, any>;
const json = (text: string | undefined): Parsed => JSON.parse(text ?? 'null') as Parsed;

test('init --remote wires every client to the hub, the token never in a file; a second run changes nothing', () => {
  const bus = tempBus();
  try {
    const shop = repo(bus, 'shop');
    const secret = 'abt_0123456789abcdef_' + 'S'.repeat(43);
    const env = { ...bus.env, AGENT_BUS_TOKEN: secret };
    const first = runCli(['init', shop, '--clients', CLIENTS, '--remote', `${HUB}/`], { env });
    assert.equal(first.code, 0, first.stderr);
    const files = written(shop);
    for (const [path, text] of files) assert.ok(!text.includes(secret) && !text.includes('S'.repeat(20)), `${path} holds the token`);
    // Claude Code's server is a relay on this machine (serve, set to use the hub), so it can wake the session through its socket.
    const mcp = json(files.get('.mcp.json')).mcpServers['agent-bus'];
    assert.deepEqual({ command: mcp.command, args: mcp.args, env: mcp.env }, { command: 'agent-bus', args: ['serve', '--client', 'claude'], env: { AGENT_BUS_URL: HUB } });
    const settings = json(files.get('.claude/settings.json'));
    const promptHook = settings.hooks.UserPromptSubmit[0].hooks[0].command as string;
    assert.equal(promptHook, 'AGENT_BUS_URL=https://hub.example:8787 agent-bus hook-user-prompt --client claude || true');
    assert.equal(settings.statusLine.command, 'AGENT_BUS_URL=https://hub.example:8787 agent-bus statusline --client claude');
    // Nothing of this machine in what the team commits: the hub's address is the team's.
    // (AGENT_BUS_NAME may be passed through, as Codex's env_vars does for the agents spawn starts; never set.)
    for (const [path, text] of files) assert.doesNotMatch(text, /AGENT_BUS_NAME"?\s*[=:]|AGENT_BUS_REPO|"\/|\/tmp\//, path);
    const codex = parseToml(files.get('.codex/config.toml') ?? '') as Parsed;
    // Codex's server is the same relay: the token passes through from Codex's environment, never written.
    const codexServer = { ...codex.mcp_servers['agent-bus'] } as Record<string, unknown>;
    assert.deepEqual([codexServer.command, codexServer.args, { ...(codexServer.env as object) }], ['agent-bus', ['serve', '--client', 'codex'], { AGENT_BUS_URL: HUB }]);
    assert.ok((codexServer.env_vars as string[]).includes('AGENT_BUS_TOKEN'));
    assert.match(json(files.get('.codex/hooks.json')).hooks.UserPromptSubmit[0].hooks[0].command, /^AGENT_BUS_URL=https:\/\/hub\.example:8787 /);
    assert.deepEqual(json(files.get('.opencode/opencode.json')).mcp['agent-bus'], {
      type: 'remote',
      url: `${HUB}/mcp`,
      oauth: false,
      headers: { Authorization: 'Bearer {env:AGENT_BUS_TOKEN}' },
      enabled: true,
    });
    assert.match(files.get('.opencode/plugins/agent-bus.js') ?? '', /const HUB = "https:\/\/hub\.example:8787";/);
    assert.deepEqual(json(files.get('.agents/plugins/agent-bus/mcp_config.json')).mcpServers['agent-bus'], {
      serverUrl: `${HUB}/mcp`,
      headers: { Authorization: 'Bearer $AGENT_BUS_TOKEN' },
    });
    assert.match(json(files.get('.agents/plugins/agent-bus/hooks.json'))['agent-bus'].Stop[0].command, /^AGENT_BUS_URL=https:\/\/hub\.example:8787 /);
    const gemini = json(files.get('.gemini/settings.json'));
    assert.deepEqual(gemini.mcpServers['agent-bus'], { httpUrl: `${HUB}/mcp`, headers: { Authorization: 'Bearer $AGENT_BUS_TOKEN' }, trust: true });
    assert.equal(gemini.hooks.BeforeAgent[0].hooks[0].command, 'AGENT_BUS_URL=https://hub.example:8787 AGENT_BUS_DEFAULT_CHANNELS=brain,amygdala agent-bus hook-user-prompt --client gemini || true');
    assert.deepEqual(json(files.get('.github/mcp.json')).mcpServers['agent-bus'], { type: 'http', url: `${HUB}/mcp`, headers: { Authorization: 'Bearer ${AGENT_BUS_TOKEN}' }, tools: ['*'] });
    assert.equal(json(files.get('.github/hooks/agent-bus.json')).hooks.Stop[0].hooks[0].command, 'AGENT_BUS_URL=https://hub.example:8787 agent-bus hook-stop --client copilot || true');
    // The hub is not reached (nothing answers at hub.example): the repo's clients appear there when their sessions connect.
    assert.match(first.stdout, /^On the hub: could not reach https:\/\/hub\.example:8787 \(.*\); shop\/claude, shop\/codex, shop\/opencode, shop\/agy, shop\/gemini, shop\/copilot are on the hub's roster once a token is made for each \(on the hub: agent-bus token create shop\/claude\)\.$/m);
    const again = runCli(['init', shop, '--clients', CLIENTS, '--remote', HUB], { env });
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /nothing to do/);
    assert.deepEqual(written(shop), files, 'idempotent');
    assert.ok(!statSync(bus.folder, { throwIfNoEntry: false }), 'no local bus was opened or made');
  } finally {
    bus.cleanup();
  }
});

test('local and remote wiring replace each other cleanly, keeping what init does not own; a bad --remote writes nothing', () => {
  const bus = tempBus();
  try {
    const shop = repo(bus, 'shop');
    mkdirSync(join(shop, '.claude'), { recursive: true });
    writeFileSync(join(shop, '.mcp.json'), JSON.stringify({ mcpServers: { other: { command: 'other-server' } } }));
    writeFileSync(join(shop, '.claude', 'settings.json'), JSON.stringify({ hooks: { Stop: [{ matcher: '', hooks: [{ type: 'command', command: 'my-own-stop-hook' }] }] }, model: 'opus' }));
    assert.equal(runCli(['init', shop, '--clients', 'claude,codex'], { env: bus.env }).code, 0);
    const local = written(shop);
    assert.equal(runCli(['init', shop, '--clients', 'claude,codex', '--remote', HUB], { env: bus.env }).code, 0);
    const remote = written(shop);
    const mcp = json(remote.get('.mcp.json')).mcpServers;
    assert.deepEqual(Object.keys(mcp).sort(), ['agent-bus', 'other']);
    assert.deepEqual(mcp['agent-bus'].args, ['serve', '--client', 'claude']);
    assert.equal(mcp['agent-bus'].env.AGENT_BUS_URL, HUB, 'the server is the relay to the hub');
    assert.equal(mcp['agent-bus'].env.AGENT_BUS_REPO, undefined);
    const settings = json(remote.get('.claude/settings.json'));
    assert.equal(settings.model, 'opus');
    const stopCommands = (settings.hooks.Stop as Array<{ hooks: Array<{ command: string }> }>).flatMap((group) => group.hooks.map((hook) => hook.command));
    assert.ok(stopCommands.includes('my-own-stop-hook'));
    assert.equal(stopCommands.filter((command) => / hook-stop --client claude/.test(command)).length, 1, 'one stop hook of ours');
    assert.ok(stopCommands.every((command) => !/hook-stop --client claude/.test(command) || command.startsWith('AGENT_BUS_URL=')));
    assert.match(remote.get('.codex/config.toml') ?? '', /^env = \{ AGENT_BUS_URL = "https:\/\/hub\.example:8787" \}$/m);
    assert.match(remote.get('.codex/config.toml') ?? '', /^command = "agent-bus"$/m);
    // An older init's entry for the hub (Claude Code's own HTTP connection) is init's to replace with the relay.
    const older = json(remote.get('.mcp.json'));
    older.mcpServers['agent-bus'] = { type: 'http', url: `${HUB}/mcp`, headers: { Authorization: 'Bearer ${AGENT_BUS_TOKEN}' } };
    writeFileSync(join(shop, '.mcp.json'), JSON.stringify(older, null, 2));
    assert.equal(runCli(['init', shop, '--clients', 'claude,codex', '--remote', HUB], { env: bus.env }).code, 0);
    assert.deepEqual(json(written(shop).get('.mcp.json')).mcpServers['agent-bus'], mcp['agent-bus']);
    // And back: exactly the local wiring again.
    assert.equal(runCli(['init', shop, '--clients', 'claude,codex'], { env: bus.env }).code, 0);
    assert.deepEqual(written(shop), local);
    for (const bad of ['hub.example', 'ftp://hub.example', 'https://user:pw@hub.example']) {
      const refused = runCli(['init', shop, '--remote', bad], { env: bus.env });
      assert.equal(refused.code, 2, bad);
      assert.equal(messageLines(refused.stderr).length, 1, refused.stderr);
    }
    assert.deepEqual(written(shop), local, 'nothing written');
    const plain = runCli(['init', shop, '--clients', 'claude', '--remote', 'http://hub.example:8787'], { env: bus.env });
    assert.match(plain.stdout, /plain http: the token would cross the network unencrypted/);
  } finally {
    bus.cleanup();
  }
});

test('wired by init --remote, the MCP entry and the hook commands work against a running hub with $AGENT_BUS_TOKEN', async () => {
  const bus = tempBus();
  const hub = await startHub(bus);
  try {
    const { token } = createToken(bus, 'shop/claude');
    const machine = tempBus();
    try {
      const shop = repo(machine, 'shop');
      const env = { PATH: process.env.PATH, HOME: join(machine.dir, 'home'), NO_COLOR: '1' };
      // Without a token, init says how the repo gets on the hub's roster; with shop/claude's token, that it is there.
      const untokened = runCli(['init', shop, '--clients', 'claude', '--remote', hub.url], { env });
      assert.equal(untokened.code, 0, untokened.stderr);
      assert.match(untokened.stdout, /^On the hub: shop\/claude is on the hub's roster once a token is made for it \(on the hub: agent-bus token create shop\/claude\)\.$/m);
      const init = runCli(['init', shop, '--clients', 'claude,codex', '--remote', hub.url], { env: { ...env, AGENT_BUS_TOKEN: token } });
      assert.equal(init.code, 0, init.stderr);
      assert.match(init.stdout, /^On the hub: shop\/claude is on its roster \(the token's agent\); shop\/codex is on the hub's roster once a token is made for it \(on the hub: agent-bus token create shop\/codex\)\.$/m);
      assert.equal(runCli(['send', 'before any session', '--to', 'shop/claude'], { env: bus.env }).code, 0, "mail to it waits at the hub");
      // The next step names the token the session needs, and how this machine's commands reach the hub.
      assert.match(init.stdout, /start Claude Code there \(or codex\), with AGENT_BUS_TOKEN set\n {2}agent-bus login http:\/\/\S+ +make this machine's commands use the hub\n/);
      const files = written(shop);
      // The MCP entry as Claude Code starts it: its command, args and env, in Claude Code's environment with the token.
      const entry = json(files.get('.mcp.json')).mcpServers['agent-bus'];
      const relay = await connect({ ...env, AGENT_BUS_TOKEN: token, ...(entry.env as NodeJS.ProcessEnv) }, { args: (entry.args as string[]).slice(1), cwd: shop });
      try {
        assert.equal((await relay.call<{ name: string }>('whoami')).name, 'shop/claude');
      } finally {
        await relay.close();
      }
      // The prompt hook's command as Claude Code runs it, in a shell with the token in its environment.
      assert.equal(runCli(['send', 'through the wiring', '--to', 'shop/claude'], { env: bus.env }).code, 0);
      const command = json(files.get('.claude/settings.json')).hooks.UserPromptSubmit[0].hooks[0].command as string;
      // As written: the bare agent-bus, found on PATH.
      const ran = spawnSync('sh', ['-c', command], {
        env: { ...env, AGENT_BUS_TOKEN: token, PATH: agentBusOnPath(machine.dir).PATH },
        input: '{"session_id":"s-1"}',
        encoding: 'utf8',
        cwd: shop,
      });
      assert.equal(ran.status, 0, ran.stderr);
      assert.match(ran.stdout, /through the wiring/);
      assert.deepEqual(readdirSync(join(machine.dir, 'home')), [], 'the other machine has no bus of its own');
    } finally {
      machine.cleanup();
    }
  } finally {
    await hub.stop();
    bus.cleanup();
  }
});
