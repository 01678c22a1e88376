/**
 * The README's quick start, command by command, as a newcomer runs it: on a fresh HOME with a bus of
 * its own, in a scratch git repo at ~/code/shop. The commands are read from the README, so changing
 * the quick start changes what this runs. Three things stand in for what a test cannot do:
 * - the install line (`npm ci && npm run build && npm install -g .`) is not run: the built CLI is put
 *   on PATH as `agent-bus` (a shim) instead, as the global install would (test/e2e/first-command.test.ts
 *   runs the real install);
 * - `claude` and `codex` are stand-ins on PATH (test/helpers/client-stand-in.mjs) that do for the bus
 *   what starting the client does: they start the MCP server the repo's committed wiring names, from
 *   the repo's folder, call `whoami` so the session joins, and take their mail as a model would;
 * - `agent-bus web` is given `--no-open --port 0`: no browser to open, and a free port.
 * Each step's outcome is checked (files written, sessions listed, mail read, the dashboard answering),
 * not the wording of what it prints.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parse as parseToml } from 'smol-toml';
import { CLI, ROOT, runCli, tempBus, type TempBus } from '../helpers/bus-env.js';
import { waitFor } from '../helpers/wait.js';

const STAND_IN = join(ROOT, 'test', 'helpers', 'client-stand-in.mjs');
const CLIENTS = ['claude', 'codex'];
const INSTALL = 'npm ci && npm run build && npm install -g .';

/** The commands of the README's quick start: its first shell block, each line without its comment. */
function quickStart(readme: string): string[] {
  const at = readme.indexOf('\n## Quick start\n');
  assert.ok(at >= 0, 'the README has a "## Quick start" section');
  const block = /```sh\n([\s\S]*?)\n```/.exec(readme.slice(at));
  assert.ok(block, 'the quick start has a shell block');
  return (block[1] as string)
    .split('\n')
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

/** A long-running step (a client, the dashboard): its process and what it printed. */
interface Running {
  child: ChildProcess;
  out(): string;
  err(): string;
}

function start(line: string, cwd: string, env: NodeJS.ProcessEnv): Running {
  const child = spawn('bash', ['-c', `exec ${line}`], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString()));
  return { child, out: () => out, err: () => err };
}

/** The JSON events a client stand-in printed. */
function events(running: Running): Array<{ joined?: string; read?: { body?: string; from?: string } }> {
  return running
    .out()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { joined?: string; read?: { body?: string } });
}

function shellWord(line: string, index: number): string {
  return line.split(/\s+/)[index] ?? '';
}

/** The PATH a newcomer has after the install: agent-bus, and the two clients, first. */
function installShims(bus: TempBus): string {
  const bin = join(bus.dir, 'bin');
  mkdirSync(bin);
  const script = (name: string, body: string): void => {
    writeFileSync(join(bin, name), `#!/bin/sh\n${body}\n`);
    chmodSync(join(bin, name), 0o755);
  };
  // The install step: the built CLI as `agent-bus` on PATH, as `npm install -g .` links it.
  script('agent-bus', `exec "${process.execPath}" "${CLI}" "$@"`);
  for (const client of CLIENTS) script(client, `exec "${process.execPath}" "${STAND_IN}" ${client} "$@"`);
  return bin;
}

test("the README's quick start, run in order on a fresh HOME and a scratch repo: the demo runs, init wires both clients, both sessions join, the mail is read, the dashboard answers", { timeout: 180_000 }, async () => {
  const commands = quickStart(readFileSync(join(ROOT, 'README.md'), 'utf8'));
  assert.ok(commands.length <= 10, `the quick start is at most 10 commands: ${commands.length}`);
  const bus = tempBus();
  const running: Running[] = [];
  try {
    const bin = installShims(bus);
    const env: NodeJS.ProcessEnv = { ...bus.env, PATH: `${bin}:${process.env.PATH ?? ''}` };
    const home = env.HOME as string;
    const repo = join(home, 'code', 'shop');
    mkdirSync(repo, { recursive: true });
    assert.equal(spawnSync('git', ['init', '-q'], { cwd: repo }).status, 0);

    const done = new Set<string>();
    const joined = new Map<string, { name: string; process: Running }>();
    let cwd = home;
    for (const line of commands) {
      const [program] = line.split(/\s+/);
      if (line === INSTALL) {
        // Replaced by the shim: the agent-bus on PATH is the one just built.
        const version = spawnSync('agent-bus', ['--version'], { env, encoding: 'utf8' });
        assert.equal(version.status, 0, `agent-bus runs from PATH: ${version.stderr}`);
        done.add('install');
        continue;
      }
      if (program !== undefined && CLIENTS.includes(program)) {
        const client = start(line, cwd, env);
        running.push(client);
        const name = await waitFor(() => events(client).find((event) => event.joined !== undefined)?.joined, () => `${line} to join the bus: ${client.err()}`, 30_000);
        assert.match(name, new RegExp(`^shop/${program}(-\\d+)?$`), `${program}'s session is named for the repo and the client`);
        joined.set(program, { name, process: client });
        done.add(program);
        continue;
      }
      if (/^agent-bus web\b/.test(line)) {
        const web = start(`${line} --no-open --port 0`, cwd, env);
        running.push(web);
        const url = await waitFor(() => /(http:\/\/\S+\?key=\S+)/.exec(web.out())?.[1], () => `agent-bus web to print its URL: ${web.err()}`, 30_000);
        const signIn = await fetch(url, { redirect: 'manual' });
        assert.ok(signIn.status < 400, `the printed URL answers: ${signIn.status}`);
        const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0] as string;
        assert.ok(cookie !== '', 'opening the URL signs the browser in');
        const roster = await fetch(new URL('/api/roster', url), { headers: { cookie } });
        assert.equal(roster.status, 200, 'the dashboard answers with the roster');
        const text = await roster.text();
        for (const { name } of joined.values()) assert.ok(text.includes(name), `the dashboard's roster lists ${name}`);
        done.add('web');
        continue;
      }
      const pwdFile = join(bus.dir, 'pwd');
      const result = spawnSync('bash', ['-c', `${line}\nstatus=$?\npwd > "${pwdFile}"\nexit $status`], { cwd, env, encoding: 'utf8', timeout: 120_000 });
      assert.equal(result.status, 0, `\`${line}\` exits 0: ${result.stderr.slice(-2000)}`);
      cwd = readFileSync(pwdFile, 'utf8').trim();

      if (program === 'cd') {
        assert.equal(realpathSync(cwd), realpathSync(repo), 'the quick start works in the scratch repo (~/code/shop)');
      } else if (line === 'agent-bus demo') {
        assert.ok(result.stdout.trim() !== '', 'the demo shows what it does');
        done.add('demo');
      } else if (shellWord(line, 1) === 'init') {
        assert.equal(realpathSync(cwd), realpathSync(repo), 'init runs in the repo');
        const claude = JSON.parse(readFileSync(join(repo, '.mcp.json'), 'utf8')) as { mcpServers?: Record<string, { command?: string }> };
        assert.ok(claude.mcpServers?.['agent-bus']?.command, '.mcp.json names the agent-bus server for Claude Code');
        assert.ok(existsSync(join(repo, '.claude', 'settings.json')), "Claude Code's hooks are written");
        const codex = parseToml(readFileSync(join(repo, '.codex', 'config.toml'), 'utf8')) as { mcp_servers?: Record<string, { command?: string }> };
        assert.ok(codex.mcp_servers?.['agent-bus']?.command, '.codex/config.toml names the agent-bus server for Codex');
        assert.ok(existsSync(join(repo, '.codex', 'hooks.json')), "Codex's hooks are written");
        done.add('init');
      } else if (shellWord(line, 1) === 'agents') {
        for (const [client, { name }] of joined) assert.ok(result.stdout.includes(name), `agents lists ${client}'s session ${name}: ${result.stdout}`);
        done.add('agents');
      } else if (shellWord(line, 1) === 'send') {
        const body = /send "([^"]+)"/.exec(line)?.[1];
        const to = /--to (\S+)/.exec(line)?.[1] ?? '';
        assert.ok(body !== undefined, 'the quick start sends a message with a quoted body');
        const recipient = joined.get(/^shop\/(\w+)/.exec(to)?.[1] ?? '');
        assert.ok(recipient, `the mail goes to a client the quick start started: ${to}`);
        // The recipient takes it as its model would, at its next read of its inbox.
        await waitFor(() => events(recipient.process).find((event) => event.read?.body === body), () => `${recipient.name} to read the mail: ${recipient.process.err()}`, 30_000);
        const audit = runCli(['tail', '--json', '--limit', '200'], { env, cwd })
          .stdout.split('\n')
          .filter((row) => row.startsWith('{'))
          .map((row) => JSON.parse(row) as { op?: string; body_preview?: string; message_id?: string });
        const sent = audit.find((row) => row.op === 'send' && row.body_preview === body);
        assert.ok(sent?.message_id, 'the send is in the audit log');
        const status = JSON.parse(runCli(['status', sent.message_id, '--json'], { env, cwd }).stdout) as { state?: string };
        assert.equal(status.state, 'read', 'status says the mail was read');
        done.add('send');
      } else if (shellWord(line, 1) === 'tail') {
        const body = [...commands.join('\n').matchAll(/send "([^"]+)"/g)].map((match) => match[1] as string);
        for (const sent of body) assert.ok(result.stdout.includes(sent), `tail shows the send: ${result.stdout}`);
        done.add('tail');
      }
    }
    for (const step of ['install', 'demo', 'init', ...CLIENTS, 'send', 'web']) assert.ok(done.has(step), `the quick start has its ${step} step`);
    assert.ok(done.has('agents') || done.has('tail'), 'the quick start shows the mail arriving');
  } finally {
    for (const { child } of running) if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await Promise.all(running.map(({ child }) => (child.exitCode !== null || child.signalCode !== null ? null : new Promise((resolve) => child.on('close', resolve)))));
    bus.cleanup();
  }
});
