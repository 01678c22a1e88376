/**
 * Cline CLI for real, offline: a temp repo wired by `agent-bus init --clients cline` (the generated
 * plugin in the repo, our server in Cline's user MCP settings under the machine's HOME), `cline --json
 * -y` against a fake chat completions server on 127.0.0.1; everything else is what init wrote.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli } from '../helpers/bus-env.js';
import { cline } from './drivers.js';
import { assertReceiptsHonest, mailBody, modelSaw, NOTICE_MARKERS, wiredRepo } from './harness.js';
import { localScenarios, remoteScenarios } from './scenarios.js';

localScenarios(cline, {
  wiring(repo) {
    assert.match(readFileSync(join(repo, '.cline', 'plugins', 'agent-bus.js'), 'utf8'), /^\/\/ Managed by `agent-bus init`/);
  },
  promptHook: "the plugin's beforeRun",
  duringTurn: 'continues',
  readInbox: 'read',
  notices: {
    tools: ['channel_list'],
    shown: 'a critical one reaches the model after the tool call (beforeTool), an info one once',
    check(requests) {
      const last = requests.at(-1) ?? '';
      assert.ok(last.includes('"role":"tool"'), `a tool call came back (${requests.length} requests)`);
      assert.ok(last.includes(NOTICE_MARKERS.critical), 'the critical notice reached the model with the tool call');
      assert.equal(last.split(NOTICE_MARKERS.info).length - 1, 1, 'the info notice was shown once');
    },
  },
  launchChannels: { over: "the repo's default in the plugin", callsATool: true },
  urgent: 'after the tool call it was sent at (beforeTool)',
});

// Over a hub, the server in Cline's user settings is a relay (AGENT_BUS_URL), and the plugin's hooks reach the hub.
remoteScenarios(cline, { sender: 'shop/cline', readInbox: true });

test('Cline CLI in a run of three tool calls: urgent mail sent as the first is made reaches the model after it (beforeTool), and plain mail sent with it waits for the run to end (submit_and_exit refused once while it waits)', { skip: cline.skip, timeout: 180_000 }, async () => {
  const s = wiredRepo('cline');
  const machine = { repo: s.repo, home: s.bus.env.HOME as string, dir: s.bus.dir, env: s.bus.env };
  const urgent = mailBody('URGENT-MID-RUN');
  const plain = mailBody('PLAIN-MID-RUN');
  let calls = 0;
  const model = await cline.startModel(() => {
    if (calls >= 3) return { text: 'checked the fleet three times' };
    calls++;
    if (calls === 1) {
      for (const [body, flags] of [[urgent, ['--urgent']], [plain, []]] as const) {
        assert.equal(runCli(['send', body, '--to', 'shop/cline', ...flags], { env: s.bus.env }).code, 0);
      }
    }
    return { call: 'list_agents', input: {} };
  });
  try {
    const run = await cline.run(machine, model.url, 'check the fleet three times');
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    const { requests } = model;
    assert.ok(requests.length >= 5, `three calls, a refused submit and the last one (${requests.length} requests)`);
    assert.equal(requests.findIndex((raw) => modelSaw(urgent, [raw])), 1, 'the urgent mail is first in the request after the first call');
    const turn = requests.slice(0, 4);
    assert.ok(!turn.some((raw) => modelSaw(plain, [raw])), 'the plain mail is not in the run of three calls');
    assert.ok(modelSaw(plain, requests.slice(4)), 'the plain mail reached the model when the run would have ended');
    assert.ok(resultsOf(requests.slice(4)).some((result) => result.includes('PLAIN-MID-RUN')), "the refused submit_and_exit's result carried it");
    assertReceiptsHonest(s.bus, 'shop/cline', requests, {
      delivered: [
        { body: urgent, via: 'hook-pre-tool' },
        { body: plain, via: 'hook-stop' },
      ],
    });
  } finally {
    await model.close();
    s.bus.cleanup();
  }
});

/** The tool results the requests carry. */
function resultsOf(requests: readonly string[]): string[] {
  return requests.flatMap((raw) => cline.toolResults(raw));
}

test("Cline CLI: mail to the session address its server holds reaches the model through the plugin's hooks, which run in Cline's plugin sandbox and still find that session", { skip: cline.skip, timeout: 180_000 }, async () => {
  const s = wiredRepo('cline');
  const machine = { repo: s.repo, home: s.bus.env.HOME as string, dir: s.bus.dir, env: s.bus.env };
  const mail = mailBody('MAIL-TO-THE-SESSION');
  let session = '';
  const model = await cline.startModel((request) => {
    if (request.index === 1) return { call: 'whoami', input: {} };
    if (session === '') {
      // whoami's result names the session address; mail to it comes while the run goes on.
      session = /"name\\?":\\?"(shop\/cline-\d+)\\?"/.exec(resultsOf([model.requests.at(-1) ?? '']).join('\n'))?.[1] ?? 'unknown';
      assert.equal(runCli(['send', mail, '--to', session], { env: s.bus.env }).code, 0);
    }
    return { text: 'finished the work here' };
  });
  try {
    const run = await cline.run(machine, model.url, 'say who you are');
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    assert.match(session, /^shop\/cline-\d+$/, 'whoami named a session address');
    assert.ok(modelSaw(mail, model.requests), `the mail to ${session} reached the model (${model.requests.length} requests)`);
    assertReceiptsHonest(s.bus, 'shop/cline', model.requests, { delivered: [{ body: mail, via: 'hook-stop' }] });
  } finally {
    await model.close();
    s.bus.cleanup();
  }
});
