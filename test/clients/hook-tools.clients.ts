/**
 * The real Claude Code and Codex with the hooks init writes for them now: answered by the session's
 * own agent-bus server, with no process. agent-bus on PATH is a wrapper that logs every run, so a
 * run's hook processes are counted; and a server killed mid-session loses no mail.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { CLI, json, runCli } from '../helpers/bus-env.js';
import { claude, codex, type ClientDriver } from './drivers.js';
import { wiredRepo, wiredRepoWith, type WiredRepo } from './harness.js';

/** agent-bus on the repo's PATH replaced by a wrapper that notes each run as it starts: the returned log, a subcommand a line. */
function countRuns(s: WiredRepo): string {
  const log = join(s.bus.dir, 'runs.log');
  writeFileSync(log, '');
  const link = join(s.bus.dir, 'path-bin', 'agent-bus');
  assert.match(readlinkSync(link), /cli\.cjs$/, 'wiredRepo put agent-bus on PATH');
  rmSync(link);
  writeFileSync(link, `#!/bin/sh\nprintf '%s\\n' "$1" >> '${log}'\nexec '${process.execPath}' '${CLI}' "$@"\n`);
  chmodSync(link, 0o755);
  return log;
}

/** The agent-bus subcommands run, in order. */
function runsIn(log: string): string[] {
  return readFileSync(log, 'utf8').split('\n').filter((line) => line !== '');
}

function sendTo(s: WiredRepo, body: string, to: string): string {
  const sent = runCli(['send', body, '--to', to, '--name', 'human', '--json'], { env: s.bus.env });
  assert.equal(sent.code, 0, sent.stderr);
  return json<{ message_ids: string[] }>(sent).message_ids[0] as string;
}

function stateOf(s: WiredRepo, id: string): string {
  return json<{ state: string }>(runCli(['status', id, '--json'], { env: s.bus.env })).state;
}

for (const driver of [claude, codex] as ClientDriver[]) {
  test(`${driver.label}: mail at the prompt, a stop held once for mail, tool calls: no hook process for any of them`, { skip: driver.skip }, async () => {
    const s = wiredRepo(driver.id);
    let atStop = '';
    const model = await driver.startModel(({ index }) => {
      // Mail that comes during the turn waits for its end: the stop holds the agent once to read it.
      if (index === 2) atStop = sendTo(s, 'MAIL-AT-STOP', `shop/${driver.id}`);
      return index <= 2 ? { call: 'list_agents', input: {} } : { text: 'done' };
    });
    try {
      const hooks = readFileSync(join(s.repo, driver.id === 'claude' ? '.claude/settings.json' : '.codex/hooks.json'), 'utf8');
      assert.match(hooks, /"type": "mcp_tool"/, 'init wrote hooks the server answers');
      const log = countRuns(s);
      driver.prepare({ repo: s.repo, home: s.bus.env.HOME as string, dir: s.bus.dir, env: s.bus.env });
      const first = sendTo(s, 'MAIL-AT-PROMPT', `shop/${driver.id}`);
      const run = await driver.run({ repo: s.repo, home: s.bus.env.HOME as string, dir: s.bus.dir, env: s.bus.env }, model.url, 'hello');
      assert.equal(run.code, 0, run.stderr);
      assert.ok(model.requests[0]?.includes('MAIL-AT-PROMPT'), 'the prompt hook put the mail in the first request');
      assert.equal(stateOf(s, first), 'read');
      const heldAt = model.requests.findIndex((request) => request.includes('MAIL-AT-STOP'));
      assert.equal(heldAt, model.requests.length - 1, `the stop held the agent once, for the mail: the last request carries it (request ${heldAt + 1} of ${model.requests.length})`);
      assert.equal(stateOf(s, atStop), 'read');
      const runs = runsIn(log);
      const hookRuns = runs.filter((command) => /^hook-(user-prompt|pre-tool|stop|notification)$/.test(command));
      assert.deepEqual(hookRuns, [], `no hook process for a prompt, a tool call or a stop (runs: ${runs.join(', ')})`);
      assert.equal(runs.filter((command) => command === 'serve').length, 1, 'one server for the session');
      // Claude Code will not route SessionStart to a server: it stays a command, once per session.
      assert.equal(runs.filter((command) => command === 'hook-session-start').length, driver.id === 'claude' ? 1 : 0);
    } finally {
      await model.close();
      s.bus.cleanup();
    }
  });
}

for (const driver of [claude, codex] as ClientDriver[]) {
  test(`${driver.label} with command hooks (as an older version gets them): the same mail at the prompt and stop, a process per hook`, { skip: driver.skip }, async () => {
    const s = wiredRepoWith({ hooks: 'command' }, driver.id);
    const model = await driver.startModel(({ index }) => {
      if (index === 2) sendTo(s, 'COMMAND-MAIL-AT-STOP', `shop/${driver.id}`);
      return index <= 2 ? { call: 'list_agents', input: {} } : { text: 'done' };
    });
    try {
      const hooks = readFileSync(join(s.repo, driver.id === 'claude' ? '.claude/settings.json' : '.codex/hooks.json'), 'utf8');
      assert.doesNotMatch(hooks, /mcp_tool/, 'command hooks, as asked');
      const log = countRuns(s);
      const machine = { repo: s.repo, home: s.bus.env.HOME as string, dir: s.bus.dir, env: s.bus.env };
      driver.prepare(machine);
      const first = sendTo(s, 'COMMAND-MAIL-AT-PROMPT', `shop/${driver.id}`);
      const run = await driver.run(machine, model.url, 'hello');
      assert.equal(run.code, 0, run.stderr);
      assert.ok(model.requests[0]?.includes('COMMAND-MAIL-AT-PROMPT'));
      assert.equal(stateOf(s, first), 'read');
      assert.ok(model.requests.at(-1)?.includes('COMMAND-MAIL-AT-STOP'), 'the stop held the agent for the mail');
      const runs = runsIn(log);
      for (const command of ['hook-user-prompt', 'hook-pre-tool', 'hook-stop']) assert.ok(runs.includes(command), `${command} ran as a process (${runs.join(', ')})`);
    } finally {
      await model.close();
      s.bus.cleanup();
    }
  });
}

/** The pid of the agent-bus server Claude Code started in `repo`. */
function serverIn(repo: string): number {
  const found = spawnSync('pgrep', ['-f', 'serve --client claude'], { encoding: 'utf8' })
    .stdout.split('\n')
    .filter((pid) => pid.trim() !== '')
    .map(Number)
    .filter((pid) => {
      try {
        return readlinkSync(`/proc/${pid}/cwd`) === repo;
      } catch {
        return false;
      }
    });
  assert.equal(found.length, 1, `one server runs in ${repo}`);
  return found[0] as number;
}

/** Until `pid` has ended (a zombie counts: the table reads it as ended). */
function waitEnded(pid: number): void {
  for (let tries = 0; tries < 200; tries++) {
    let state = '';
    try {
      state = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] ?? '';
    } catch {
      return;
    }
    if (state === 'Z' || state === 'X') return;
    spawnSync('sleep', ['0.02']);
  }
}

test('Claude Code: its server killed mid-session, the turn goes on, doctor names the session, and the mail is delivered later, never lost', { skip: claude.skip }, async () => {
  const s = wiredRepo('claude');
  const log = countRuns(s);
  const machine = { repo: s.repo, home: s.bus.env.HOME as string, dir: s.bus.dir, env: s.bus.env };
  claude.prepare(machine);
  let mail = '';
  let doctor = '';
  let stateAfterKill = '';
  const readme = join(s.repo, 'README.md');
  writeFileSync(readme, 'hello\n');
  const model = await claude.startModel(({ index }) => {
    if (index === 1) return { call: 'list_agents', input: {} };
    if (index === 2) {
      // The server is killed, and mail arrives for the session: doctor names the session cut off from its server.
      const pid = serverIn(s.repo);
      process.kill(pid, 'SIGKILL');
      waitEnded(pid);
      mail = sendTo(s, 'MAIL-WHILE-SERVER-GONE', 'shop/claude');
      stateAfterKill = stateOf(s, mail);
      doctor = runCli(['doctor'], { env: s.bus.env, cwd: s.repo }).stdout;
      return { edit: { file: readme, old: 'hello', new: 'hello' } };
    }
    return { text: 'done' };
  });
  try {
    const run = await claude.run(machine, model.url, 'hello');
    assert.equal(run.code, 0, `the turn was not broken: ${run.stderr}`);
    assert.equal(stateAfterKill, 'sent');
    assert.match(doctor, /warn +sessions: 1 session\(s\) whose client runs on without its agent-bus server \(shop\/claude-1\): their hooks reach nothing, so their mail waits unread/);
    // Claude Code starts a server that died again, and a later hook of the session delivers the mail;
    // where none comes, the next session's first prompt does.
    let shown = model.requests.slice(2).some((request) => request.includes('MAIL-WHILE-SERVER-GONE'));
    if (!shown) {
      const next = await claude.startModel(() => ({ text: 'done' }));
      try {
        assert.equal((await claude.run(machine, next.url, 'hello again')).code, 0);
        shown = next.requests[0]?.includes('MAIL-WHILE-SERVER-GONE') ?? false;
      } finally {
        await next.close();
      }
    }
    assert.ok(shown, `the mail reached the model later (${runsIn(log).join(', ')})`);
    assert.equal(stateOf(s, mail), 'read');
    assert.deepEqual(runsIn(log).filter((command) => /^hook-(user-prompt|pre-tool|stop)$/.test(command)), [], 'no command hook stood in for the server');
  } finally {
    await model.close();
    s.bus.cleanup();
  }
});
