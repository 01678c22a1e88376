/**
 * Pi for real, offline: a temp repo wired by `agent-bus init --clients pi` (the extension in
 * `.pi/extensions/`), `pi -p` against a fake Anthropic Messages API on 127.0.0.1, its own folder
 * (PI_CODING_AGENT_DIR) in the temp machine's.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { json, runCli } from '../helpers/bus-env.js';
import { pathWithoutAgentBus } from '../helpers/clean-path.js';
import { createToken } from '../helpers/hub.js';
import { waitUntil } from '../helpers/wait.js';
import { PI_MODEL_ARGS, pi, piOffline } from './drivers.js';
import { assertReceiptsHonest, CLIENT_BIN, mailBody, modelSaw, NOTICE_MARKERS } from './harness.js';
import { localScenarios, remoteScenarios, withLocal, withRemote } from './scenarios.js';

localScenarios(pi, {
  wiring(repo) {
    const extension = readFileSync(join(repo, '.pi', 'extensions', 'agent-bus.ts'), 'utf8');
    assert.match(extension, /^\/\/ Managed by `agent-bus init`/);
    assert.match(extension, /^const CHANNELS = "brain,amygdala";$/m);
  },
  promptHook: 'the extension at before_agent_start',
  // At turn_end with mail to act on, the extension sends the stop hook's reason as a follow-up that starts another turn.
  duringTurn: 'continues',
  readInbox: 'read',
  notices: {
    tools: ['channel_list'],
    shown: 'the extension shows them with the first prompt',
    check(requests, bus) {
      assert.ok(requests.length >= 2, `a tool call and the request after it (${requests.length} requests)`);
      assert.ok(requests.every((raw) => raw.includes(NOTICE_MARKERS.critical)), 'the critical notice is in every request of the turn');
      assert.ok(requests.every((raw) => raw.includes(NOTICE_MARKERS.info)), 'the info notice stays in the turn it was shown in');
      const listed = json<Array<{ message: string; delivered_to: number }>>(runCli(['channel', 'list', '--notices', '--json'], { env: bus.env }));
      assert.equal(listed.find((notice) => notice.message === NOTICE_MARKERS.info)?.delivered_to, 1, 'shown to one session, once');
    },
  },
  launchChannels: { over: "the extension's CHANNELS", callsATool: false },
  urgent: "at its next tool call, steered in after the tool's result",
});

// Over a hub the extension's server is a relay, which sends Pi's session id with each call: the session speaks as a session address of its own.
remoteScenarios(pi, { sender: 'shop/pi-1', sessions: [['shop/pi-1', true]], readInbox: true });

// ------------------------------------------------------------------ Pi's own

/** A Pi session in RPC mode, which stays up between prompts: its stdout's events, a prompt sent, and its end. */
interface RpcPi {
  events: Array<{ type?: string }>;
  prompt(text: string): void;
  stop(): Promise<void>;
}

/** The agent-bus servers Pi's extension started in `repo` that still run. */
function serversIn(repo: string): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => {
      try {
        return readlinkSync(`/proc/${pid}/cwd`) === repo && readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').includes('serve --client pi');
      } catch {
        return false;
      }
    });
}

function startRpcPi(repo: string, env: NodeJS.ProcessEnv): RpcPi {
  const child = spawn(join(CLIENT_BIN, 'pi'), ['--mode', 'rpc', ...PI_MODEL_ARGS], { cwd: repo, env, stdio: ['pipe', 'pipe', 'pipe'] });
  const events: Array<{ type?: string }> = [];
  let buffered = '';
  child.stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    let end = buffered.indexOf('\n');
    while (end >= 0) {
      const line = buffered.slice(0, end);
      buffered = buffered.slice(end + 1);
      end = buffered.indexOf('\n');
      try {
        events.push(JSON.parse(line) as { type?: string });
      } catch {
        // Not an event.
      }
    }
  });
  child.stderr.on('data', () => undefined);
  return {
    events,
    prompt: (text) => child.stdin.write(`${JSON.stringify({ type: 'prompt', message: text })}\n`),
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        // Its server gives up the session as it ends, writing to the bus: the test's folder goes once it has.
        child.once('close', () => {
          clearTimeout(timer);
          void waitUntil(() => serversIn(repo).length === 0, 'the session\'s server ended', 15_000).then(resolve, resolve);
        });
        child.stdin.end();
        child.kill('SIGTERM');
      }),
  };
}

const agentEnds = (session: RpcPi): number => session.events.filter((event) => event.type === 'agent_end').length;

test('Pi: urgent mail sent during a turn is in the model request after the next tool call; plain mail sent with it waits for the turn to end', { skip: pi.skip }, withLocal(pi, {}, async (s) => {
  const urgent = mailBody('URGENT-MID-TURN');
  const plain = mailBody('PLAIN-MID-TURN');
  let calls = 0;
  const model = await pi.startModel((request) => {
    if (calls === 0) {
      for (const [body, flags] of [[urgent, ['--urgent']], [plain, []]] as const) assert.equal(runCli(['send', body, '--to', s.agent, ...flags], { env: s.bus.env }).code, 0);
    }
    if (calls >= 2 || !request.offers('list_agents')) return { text: 'done' };
    calls++;
    return { call: 'list_agents', input: {} };
  });
  try {
    const run = await s.run(model, 'check the fleet twice');
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    const [first, afterCall, afterSecond] = model.requests;
    assert.ok(first !== undefined && afterCall !== undefined && afterSecond !== undefined, `two tool calls and the requests after them (${model.requests.length} requests)`);
    assert.ok(!modelSaw(urgent, [first]), 'the first request came before the mail');
    assert.ok(modelSaw(urgent, [afterCall]), 'the urgent mail is in the request after the tool call');
    assert.ok(!modelSaw(plain, [afterCall, afterSecond]), 'the plain mail is not in the turn of tool calls');
    assert.ok(modelSaw(plain, model.requests.slice(3)), 'the plain mail reached the model when the turn would have ended');
    assertReceiptsHonest(s.bus, s.agent, model.requests, {
      delivered: [
        { body: urgent, via: 'hook-pre-tool' },
        { body: plain, via: 'hook-stop' },
      ],
    });
  } finally {
    await model.close();
  }
}));

test('Pi: mail arriving at every turn keeps the session working for AGENT_BUS_STOP_KEEPS turns in a row, no more', { skip: pi.skip }, withLocal(pi, {}, async (s) => {
  const bodies: string[] = [];
  const model = await pi.startModel(() => {
    const body = mailBody(`MAIL-AT-TURN-${bodies.length + 1}`);
    bodies.push(body);
    assert.equal(runCli(['send', body, '--to', s.agent], { env: s.bus.env }).code, 0);
    return { text: 'working on it' };
  });
  try {
    const run = await s.run(model, 'do the task', { AGENT_BUS_STOP_KEEPS: '2' });
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    assert.equal(model.requests.length, 3, 'the prompt, then two turns the stop hook started, then the guard let it stop');
    assert.ok(modelSaw(bodies[0] as string, model.requests.slice(1, 2)) && modelSaw(bodies[1] as string, model.requests.slice(2, 3)), 'each kept turn carried the mail that kept it');
    assert.ok(!modelSaw(bodies[2] as string, model.requests), 'the last mail waits, unread, for the next prompt');
    assertReceiptsHonest(s.bus, s.agent, model.requests);
  } finally {
    await model.close();
  }
}));

test('Pi: an idle session in RPC mode is woken by mail: the extension\'s socket takes the server\'s nudge and starts a turn, whose prompt shows the mail', { skip: pi.skip, timeout: 120_000 }, withLocal(pi, {}, async (s) => {
  const mail = mailBody('MAIL-TO-AN-IDLE-SESSION');
  const model = await pi.startModel(() => ({ text: 'ok' }));
  const session = startRpcPi(s.machine.repo, { ...s.machine.env, ...piOffline(s.machine, model.url) });
  try {
    session.prompt('wait for mail');
    await waitUntil(() => agentEnds(session) === 1, () => `the first prompt's turn ended (${JSON.stringify(session.events.map((event) => event.type))})`, 60_000);
    // Idle once its stop hook has let it stop: the mail then comes.
    await waitUntil(() => json<Array<{ name: string; state?: string }>>(runCli(['agents', '--json'], { env: s.bus.env })).some((agent) => agent.name.startsWith(s.agent) && agent.state === 'idle'), 'the session is idle', 20_000);
    assert.equal(runCli(['send', mail, '--to', s.agent], { env: s.bus.env }).code, 0);
    await waitUntil(() => modelSaw(mail, model.requests), () => `a woken turn's request carried the mail (${model.requests.length} requests)`, 60_000);
    await waitUntil(() => agentEnds(session) === 2, 'the woken turn ended', 30_000);
    assert.match(model.requests.at(-1) ?? '', /agent-bus: new mail from/, "the turn began with the server's nudge");
    assertReceiptsHonest(s.bus, s.agent, model.requests, { delivered: [{ body: mail, via: 'hook-user-prompt', readVia: 'hook-user-prompt' }] });
  } finally {
    await session.stop();
    await model.close();
  }
}));

test('Pi wired by init --remote: mail arriving at the hub during a turn keeps it working, and an idle RPC session is woken by mail sent at the hub', { skip: pi.skip, timeout: 120_000 }, withRemote(pi, async (r) => {
  const during = mailBody('REMOTE-MAIL-DURING-THE-TURN');
  const later = mailBody('REMOTE-MAIL-TO-AN-IDLE-SESSION');
  let sent = false;
  const model = await pi.startModel(() => {
    if (!sent) {
      sent = true;
      assert.equal(runCli(['send', during, '--to', r.agent], { env: r.hubBus.env }).code, 0);
    }
    return { text: 'working on it' };
  });
  const session = startRpcPi(r.machine.repo, { ...r.machine.env, ...piOffline(r.machine, model.url) });
  try {
    session.prompt('do the task');
    await waitUntil(() => modelSaw(during, model.requests), () => `the stop hook's follow-up carried the mail (${model.requests.length} requests)`, 60_000);
    await waitUntil(() => agentEnds(session) === 2, () => `the prompt's run and the follow-up's ended (${JSON.stringify(session.events.map((event) => event.type))})`, 30_000);
    await waitUntil(() => json<Array<{ name: string; state?: string }>>(runCli(['agents', '--json'], { env: r.hubBus.env })).some((agent) => agent.name.startsWith(r.agent) && agent.state === 'idle'), 'the session is idle at the hub', 20_000);
    const before = model.requests.length;
    assert.equal(runCli(['send', later, '--to', r.agent], { env: r.hubBus.env }).code, 0);
    await waitUntil(() => modelSaw(later, model.requests), () => `a woken turn's request carried the mail (${model.requests.length} requests)`, 60_000);
    assert.match(model.requests[before] ?? '', /agent-bus: new mail from/, "the woken turn began with the relay's nudge");
    await waitUntil(() => agentEnds(session) === 3, 'the woken turn ended', 30_000);
    assertReceiptsHonest(r.hubBus, r.agent, model.requests, {
      delivered: [
        { body: during, via: 'hook-stop', readVia: 'hook-stop' },
        { body: later, via: 'hook-user-prompt', readVia: 'hook-user-prompt' },
      ],
    });
  } finally {
    await session.stop();
    await model.close();
  }
}));

test('Pi wired by init --remote: a reservation held at the hub refuses the model\'s edit of the file, which stays untouched, and the model is told who holds it', { skip: pi.skip }, withRemote(pi, async (r) => {
  const file = join(r.machine.repo, 'src', 'auth.ts');
  mkdirSync(join(r.machine.repo, 'src'), { recursive: true });
  writeFileSync(file, 'export const version = 1;\n');
  // Another agent, on this machine too, holds the file at the hub.
  const holder = createToken(r.hubBus, 'shop/claude');
  const held = runCli(['reserve', 'src/auth.ts', '--reason', 'rewriting login'], { env: { ...r.machine.env, AGENT_BUS_URL: r.hub.url, AGENT_BUS_TOKEN: holder.token }, cwd: r.machine.repo });
  assert.equal(held.code, 0, held.stderr);
  let asked = false;
  const model = await pi.startModel((request) => {
    if (asked || !request.offers('send_message')) return { text: 'done' };
    asked = true;
    return { edit: { file, old: 'export const version = 1;', new: 'export const version = 2;' } };
  });
  try {
    const run = await r.run(model, 'update the login');
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    assert.equal(readFileSync(file, 'utf8'), 'export const version = 1;\n', 'the refused edit left the file untouched');
    const results = model.requests.flatMap((raw) => pi.toolResults(raw));
    assert.ok(results.length > 0 && results.every((result) => /\[agent-bus\] src\/auth\.ts is reserved by shop\/claude for another \d+ (?:min|h) \(rewriting login\): this edit was refused/.test(result)), JSON.stringify(results));
  } finally {
    await model.close();
  }
}));

test('Pi without agent-bus on PATH: the extension says so in one line, and the session runs without the bus', { skip: pi.skip }, withLocal(pi, {}, async (s) => {
  const model = await pi.startModel((request) => ({ text: request.offers('send_message') ? 'the bus is here' : 'no bus here' }));
  try {
    const run = await s.run(model, 'anything new?', { PATH: pathWithoutAgentBus() });
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    assert.equal(run.stdout.trim(), 'no bus here', 'the model was asked, with none of the bus\'s tools');
    assert.match(run.stderr, /^agent-bus: agent-bus is not on PATH, so this Pi session is not on the bus \(npm install -g agent-bus\)$/m);
  } finally {
    await model.close();
  }
}));

test('Pi notices: a critical one published during a turn reaches the model in the request after its next tool call', { skip: pi.skip }, withLocal(pi, {}, async (s) => {
  let calls = 0;
  const model = await pi.startModel((request) => {
    if (calls === 0) {
      const published = runCli(['channel', 'publish', 'amygdala', NOTICE_MARKERS.critical, '-s', 'critical'], { env: s.bus.env });
      assert.equal(published.code, 0, published.stderr);
    }
    if (calls >= 2 || !request.offers('list_agents')) return { text: 'done' };
    calls++;
    return { call: 'list_agents', input: {} };
  });
  try {
    const run = await s.run(model, 'check the fleet twice');
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    assert.ok(!(model.requests[0] ?? '').includes(NOTICE_MARKERS.critical), 'published after the first request was made');
    assert.ok((model.requests[1] ?? '').includes(NOTICE_MARKERS.critical), `the request after the tool call carries it (${model.requests.length} requests)`);
    assertReceiptsHonest(s.bus, s.agent, model.requests, { noneExpected: true });
  } finally {
    await model.close();
  }
}));

test('Pi: agents shows the session working in its turn and idle after', { skip: pi.skip, timeout: 120_000 }, withLocal(pi, {}, async (s) => {
  const stateOf = (): string | undefined => json<Array<{ name: string; state?: string }>>(runCli(['agents', '--json'], { env: s.bus.env })).find((agent) => agent.name.startsWith(`${s.agent}-`))?.state;
  let during: string | undefined;
  const model = await pi.startModel(() => {
    during ??= stateOf();
    return { text: 'ok' };
  });
  const session = startRpcPi(s.machine.repo, { ...s.machine.env, ...piOffline(s.machine, model.url) });
  try {
    session.prompt('work a little');
    await waitUntil(() => agentEnds(session) === 1, 'the turn ended', 60_000);
    assert.equal(during, 'working', 'in its turn, the session is working');
    await waitUntil(() => stateOf() === 'idle', () => `the session is idle after its turn (${stateOf() ?? 'not on the roster'})`, 20_000);
  } finally {
    await session.stop();
    await model.close();
  }
}));
