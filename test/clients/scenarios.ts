/**
 * The scenarios every real client is put through, written once: a client's suite names its driver
 * (drivers.ts) and a plan (which scenarios apply to it, with its own expectations), and gets one test
 * per scenario. On its own machine the client is wired by `agent-bus init` to a private bus; over a
 * hub it is wired by `init --remote` on a machine whose environment holds a token and nothing of the bus.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { json, readAudit, runCli, tempBus, type TempBus } from '../helpers/bus-env.js';
import { agentBusOnPath } from '../helpers/on-path.js';
import { waitUntil } from '../helpers/wait.js';
import { createToken, startHub, type RunningHub } from '../helpers/hub.js';
import type { ClientDriver, FileEdit, Machine, RunOptions, Script, Turn } from './drivers.js';
import { assertReceiptsHonest, initVersions, mailBody, modelSaw, NOTICE_MARKERS, publishTestNotices, wiredRepo, wiredRepoWith, type ClientRun, type FakeServer } from './harness.js';

/** A client on its own machine, wired to a private bus. */
export interface Local {
  driver: ClientDriver;
  bus: TempBus;
  machine: Machine;
  /** Its client address, `shop/<client>`. */
  agent: string;
  /** One run to completion; `run.code` is checked to be 0. */
  run(model: FakeServer, prompt: string, launch?: NodeJS.ProcessEnv, options?: RunOptions): Promise<ClientRun>;
}

export interface NoticePlan {
  /** Our tools the model calls, one a request, each once the previous one's result is in, before it says "done". */
  tools: string[];
  /** Where the test's title says the critical and info notices show. */
  shown: string;
  /** The client's own checks of where the notices reached the model. */
  check(requests: readonly string[], bus: TempBus): void;
}

export interface LocalPlan {
  /** Checks of what init wrote for the client, before it first runs. */
  wiring?(repo: string): void;
  /** What shows mail waiting at a turn's start: "the prompt hook", "the plugin". */
  promptHook: string;
  /**
   * Mail arriving during a turn: `continues`, the Stop hook keeps the client working and the next
   * request carries it; `next-turn`, the client ends at idle before a follow-up turn, and the mail
   * must stay undelivered until a turn shows it.
   */
  duringTurn: 'continues' | 'next-turn';
  /**
   * The model's read_inbox call on mail that came during the turn: `peek` (mark_read false: delivered,
   * not read, then handed over by the Stop hook), or `read`, its result in the next request of the
   * agent's turns (`read`) or in some later one (`read-later`).
   */
  readInbox: 'peek' | 'read' | 'read-later';
  notices: NoticePlan;
  /** A launch AGENT_BUS_CHANNELS over the repo's default: what the title says it wins over, and whether the model calls a tool. */
  launchChannels?: { over: string; callsATool: boolean };
  /** False where the client's sessions do not show their presence honestly (the reason in test/clients/claims.json). */
  presence?: false;
  /** Where urgent mail sent during a turn reaches the model, for the title ("at its next tool call"); no test where unset. */
  urgent?: string;
}

/** The model's turn: call `tool` with `input`. */
const call = (tool: string, input: Record<string, unknown> = {}): Turn => ({ call: tool, input });

function ranCleanly(run: ClientRun): void {
  assert.equal(run.code, 0, run.stderr.slice(-2000));
}

function sendOk(bus: TempBus, body: string, to: string): string {
  return json<{ message_id: string }>(runCli(['send', body, '--to', to, '--json'], { env: bus.env })).message_id;
}

function inboxOf(bus: TempBus, name: string): Array<{ from: string; body: string }> {
  return json<Array<{ from: string; body: string }>>(runCli(['inbox', '--name', name, '--json'], { env: bus.env }));
}

/** A model that calls send_message to the human with `body` once, then says it did. */
const greets = (body: string): Script => (request) =>
  request.afterTool || !request.offers('send_message') ? { text: 'sent it' } : call('send_message', { to: 'human', body });

/** A model that only works ("working on it"), while mail is sent at the first request of the agent's turn (after the prompt hook looked). */
function worksWhileMailComes(send: () => void): Script {
  let sent = false;
  return (request) => {
    if (!request.offers('read_inbox')) return { text: 'a title' };
    if (!sent) {
      sent = true;
      send();
    }
    return { text: 'working on it' };
  };
}

/**
 * A model that reads its inbox once mail has come during the turn: at the first request of the agent's
 * turn the mail is sent (after the prompt hook looked), and the model calls read_inbox with `input`.
 */
function readsMailSentMidTurn(send: () => void, input: Record<string, unknown>, afterResult: () => string): Script {
  let sent = false;
  return (request) => {
    if (!request.offers('read_inbox')) return { text: 'a title' };
    if (request.afterTool) return { text: afterResult() };
    if (sent) return { text: 'nothing more' };
    sent = true;
    send();
    return call('read_inbox', input);
  };
}

/** A model that edits a file once in the agent's turn (`edit`), then says it is done. */
function editsOnce(edit: FileEdit): Script {
  let asked = false;
  return (request) => {
    if (!request.offers('send_message')) return { text: 'a title' };
    if (asked) return { text: 'done' };
    asked = true;
    return { edit };
  };
}

/** A model that runs one command through its client's shell tool in the agent's turn, then says it is done. */
function runsOnce(command: string): Script {
  let asked = false;
  return (request) => {
    if (!request.offers('send_message')) return { text: 'a title' };
    if (asked) return { text: 'done' };
    asked = true;
    return { shell: command };
  };
}

/** `src/<name>` in `repo`, written with one line, `export const version = 1;`: the edit a model makes of it, and the file as it then is. */
function sourceFile(repo: string, name: string): { file: string; edit: FileEdit; edited: string } {
  const file = join(repo, 'src', name);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, 'export const version = 1;\n');
  return { file, edit: { file, old: 'export const version = 1;', new: 'export const version = 2;' }, edited: 'export const version = 2;\n' };
}

/** The texts of the tool results the requests carry, every request's in order. */
function resultsIn(driver: ClientDriver, requests: readonly string[]): string[] {
  return requests.flatMap((raw) => driver.toolResults(raw));
}

/** The requests that came after the model's first tool call: the first of them carries its result. */
function afterFirstTool(driver: ClientDriver, requests: readonly string[]): string[] {
  const first = requests.findIndex((raw) => driver.toolResults(raw).length > 0);
  return first < 0 ? [] : requests.slice(first);
}

/** The presence `agents --json` shows for each session of `client` in shop. */
function sessionStates(bus: TempBus, client: string): string[] {
  const name = new RegExp(`^shop/${client}(-\\d+)?$`);
  return json<Array<{ name: string; state: string }>>(runCli(['agents', '--json'], { env: bus.env })).filter((row) => name.test(row.name)).map((row) => row.state);
}

/** The audit's rows of `op`. */
function auditRows(bus: TempBus, op: string): Array<Record<string, unknown>> {
  return readAudit(bus.audit).filter((row) => row.op === op);
}

/** A local client's test body: set up, run `work`, and the bus and model gone afterwards whatever happens. */
export function withLocal(driver: ClientDriver, plan: Pick<LocalPlan, 'wiring'>, work: (local: Local) => Promise<void>): () => Promise<void> {
  return async () => {
    const { bus, repo } = wiredRepoWith({ env: driver.initEnv }, driver.id);
    try {
      plan.wiring?.(repo);
      const machine: Machine = { repo, home: bus.env.HOME as string, dir: bus.dir, env: bus.env };
      driver.prepare(machine);
      await work({ driver, bus, machine, agent: `shop/${driver.id}`, run: (model, prompt, launch, options) => driver.run(machine, model.url, prompt, launch, options) });
    } finally {
      bus.cleanup();
    }
  };
}

/** Start `driver`'s fake model on `script`, run `work` with it, and close it whatever happens. */
async function withModel(driver: ClientDriver, script: Script, work: (model: FakeServer) => Promise<void>): Promise<void> {
  const model = await driver.startModel(script);
  try {
    await work(model);
  } finally {
    await model.close();
  }
}

/** The scenarios of one client on its own machine, a test each. */
export function localScenarios(driver: ClientDriver, plan: LocalPlan): void {
  const { skip, label } = driver;
  const local = (work: (local: Local) => Promise<void>) => withLocal(driver, plan, work);

  test(`${label} starts our MCP server and the model's send_message lands in the bus`, { skip }, local(async (s) => {
    const greeting = `hello from ${driver.id}`;
    await withModel(driver, greets(greeting), async (model) => {
      const run = await s.run(model, 'please greet the human');
      ranCleanly(run);
      const got = inboxOf(s.bus, 'human').find((message) => message.body === greeting);
      assert.ok(got, `the tool call reached the bus (${model.requests.length} requests): ${run.stdout.slice(-1500)} ${run.stderr.slice(-1500)}`);
      assert.match(got.from, new RegExp(`^shop/${driver.id}(-\\d+)?$`));
      assertReceiptsHonest(s.bus, s.agent, model.requests, { noneExpected: true });
    });
  }));

  test(`${label}: mail sent before a turn reaches the model through ${plan.promptHook}`, { skip }, local(async (s) => {
    const mail = mailBody('MAIL-BEFORE-THE-TURN');
    sendOk(s.bus, mail, s.agent);
    await withModel(driver, () => ({ text: 'noted' }), async (model) => {
      ranCleanly(await s.run(model, 'anything new?'));
      assert.ok(modelSaw(mail, model.requests), `the mail is in a model request (${model.requests.length} requests)`);
      assertReceiptsHonest(s.bus, s.agent, model.requests, { delivered: [{ body: mail, via: 'hook-user-prompt', readVia: 'hook-user-prompt' }] });
    });
  }));

  if (plan.duringTurn === 'continues') {
    test(`mail arriving during a turn keeps ${label} working until the inbox is empty`, { skip }, local(async (s) => {
      const mail = mailBody('MAIL-DURING-THE-TURN');
      await withModel(driver, worksWhileMailComes(() => sendOk(s.bus, mail, s.agent)), async (model) => {
        ranCleanly(await s.run(model, 'do the task'));
        assert.ok(modelSaw(mail, model.requests.slice(1)), `the Stop hook made another request carry the mail (${model.requests.length} requests)`);
        assert.ok(!modelSaw(mail, model.requests.slice(0, 1)));
        assert.ok(model.requests.length <= 4, 'the loop ended once the inbox was empty');
        assertReceiptsHonest(s.bus, s.agent, model.requests, { delivered: [{ body: mail, via: 'hook-stop', readVia: 'hook-stop' }] });
      });
    }));
  } else {
    test(`${label}: mail arriving during a turn is never marked delivered unseen: the run ends at idle before a follow-up turn, and the next turn shows it`, { skip }, local(async (s) => {
      const mail = mailBody('MAIL-DURING-THE-TURN');
      await withModel(driver, worksWhileMailComes(() => sendOk(s.bus, mail, s.agent)), async (model) => {
        ranCleanly(await s.run(model, 'do the task'));
        assert.ok(!modelSaw(mail, driver.turns(model.requests, 'read_inbox').slice(0, 1)), 'the first request came before the mail');
        // At idle the client only peeks; the follow-up turn's first request would take the mail. The run
        // exits at idle, so that turn does not come: the mail must still be unsent to the model, not "delivered".
        assertReceiptsHonest(s.bus, s.agent, model.requests);
        if (modelSaw(mail, model.requests)) {
          assertReceiptsHonest(s.bus, s.agent, model.requests, { delivered: [{ body: mail, via: 'hook-stop', readVia: 'hook-stop' }] });
          return;
        }
        ranCleanly(await s.run(model, 'anything new?'));
        assert.ok(modelSaw(mail, model.requests), 'the next turn showed the mail: nothing was lost');
        assertReceiptsHonest(s.bus, s.agent, model.requests, { delivered: [{ body: mail, via: 'hook-user-prompt', readVia: 'hook-user-prompt' }] });
      });
    }));
  }

  if (plan.readInbox === 'peek') {
    test(`the model's read_inbox tool call in ${label}: a peek shows it mail that arrived during the turn (delivered, not read), and the Stop hook then hands it over`, { skip }, local(async (s) => {
      const mail = mailBody('MAIL-PEEKED-BY-THE-MODEL');
      let id = '';
      let afterPeek: { delivered_via: string | null; read_at: string | null } | undefined;
      const script = readsMailSentMidTurn(
        () => (id = sendOk(s.bus, mail, s.agent)),
        { mark_read: false },
        () => {
          afterPeek = json<{ copies: Array<{ delivered_via: string | null; read_at: string | null }> }>(runCli(['status', id, '--json'], { env: s.bus.env })).copies[0];
          return 'seen it';
        },
      );
      await withModel(driver, script, async (model) => {
        ranCleanly(await s.run(model, 'work, and look at your mail'));
        assert.ok(!modelSaw(mail, model.requests.slice(0, 1)), 'the first request came before the mail');
        assert.ok(modelSaw(mail, model.requests.slice(1, 2)), `the tool's result carried the mail to the model (${model.requests.length} requests)`);
        assert.ok(model.requests.length <= 4, 'the loop ended once the inbox was empty');
        assert.deepEqual(afterPeek, { ...afterPeek, delivered_via: 'read_inbox', read_at: null }, 'right after the peek: delivered by read_inbox, not read');
        // The peek delivered it; the Stop hook then took it (read), the delivery keeping its first way.
        assertReceiptsHonest(s.bus, s.agent, model.requests, { delivered: [{ body: mail, via: 'read_inbox', readVia: 'hook-stop' }] });
      });
    }));
  } else {
    test(`the model's read_inbox tool call in ${label}: mail that arrived during the turn reaches the model in the tool's result, read and delivered by read_inbox`, { skip }, local(async (s) => {
      const mail = mailBody('MAIL-READ-BY-THE-MODEL');
      const script = readsMailSentMidTurn(() => sendOk(s.bus, mail, s.agent), {}, () => 'handled it');
      await withModel(driver, script, async (model) => {
        ranCleanly(await s.run(model, 'work, and read your mail'));
        assertReadThroughTool(s.bus, s.agent, driver.turns(model.requests, 'read_inbox'), model.requests, mail, plan.readInbox === 'read');
      });
    }));
  }

  test(`${label} notices: ${plan.notices.shown}; an unsubscribed one never`, { skip }, local(async (s) => {
    publishTestNotices(s.bus);
    await withModel(driver, callsInTurn(plan.notices.tools), async (model) => {
      ranCleanly(await s.run(model, 'check the fleet'));
      plan.notices.check(model.requests, s.bus);
      assert.ok(model.requests.every((raw) => !raw.includes(NOTICE_MARKERS.unsubscribed)), 'a channel the repo does not subscribe to never reaches it');
      assertReceiptsHonest(s.bus, s.agent, model.requests, { noneExpected: true });
    });
  }));

  if (plan.presence !== false) test(`${label}: agents shows the session working during its turn, and not once the run has ended`, { skip }, local(async (s) => {
    const tool = plan.notices.tools[0] as string;
    let during: string[] | undefined;
    await withModel(driver, (request) => {
      if (!request.offers(tool)) return { text: 'a title' };
      during ??= sessionStates(s.bus, driver.id);
      return { text: 'done' };
    }, async (model) => {
      ranCleanly(await s.run(model, 'say done'));
      assert.ok(during?.includes('working'), `agents showed the session working while its model was asked: ${JSON.stringify(during)}`);
      // Once the client has exited (its server goes with it), the session is not working, whatever its last hook said.
      await waitUntil(() => !sessionStates(s.bus, driver.id).includes('working'), () => `the session no longer working once the run ended: ${JSON.stringify(sessionStates(s.bus, driver.id))}`, 15_000, 200);
    });
  }));

  if (plan.urgent !== undefined) {
    test(`${label}: urgent mail sent during a turn of tool calls reaches the model ${plan.urgent}, before the turn ends; plain mail sent with it waits for the turn's end`, { skip }, local(async (s) => {
      const urgent = mailBody('URGENT-MID-TURN');
      const plain = mailBody('PLAIN-MID-TURN');
      const tool = plan.notices.tools[0] as string;
      await withModel(driver, callsWhileMailComes(tool, 3, () => {
        sendOk(s.bus, plain, s.agent);
        assert.equal(runCli(['send', urgent, '--to', s.agent, '--urgent'], { env: s.bus.env }).code, 0);
      }), async (model) => {
        ranCleanly(await s.run(model, 'check the fleet three times'));
        const turns = driver.turns(model.requests, tool);
        const shown = turns.findIndex((raw) => modelSaw(urgent, [raw]));
        assert.ok(shown >= 1, `the urgent mail reached the model after the first request, sent at it (${turns.length} requests of the turn)`);
        assert.ok(shown <= 3, `the urgent mail came while the model was still calling tools: request ${shown + 1}, of ${turns.length}`);
        assert.ok(!modelSaw(plain, turns.slice(0, shown + 1)), 'the plain mail waited for the turn to end');
        assertReceiptsHonest(s.bus, s.agent, model.requests);
      });
    }));
  }

  test(`${label}: another agent's reservation refuses the model's ${driver.editTool} of the file, which stays untouched, and the model is told who holds it; released, the same edit goes ahead`, { skip }, local(async (s) => {
    const holder = driver.id === 'claude' ? 'shop/codex' : 'shop/claude';
    const { file, edit, edited } = sourceFile(s.machine.repo, 'auth.ts');
    const original = readFileSync(file, 'utf8');
    const held = runCli(['reserve', 'src/auth.ts', '--name', holder, '--reason', 'rewriting login', '--json'], { env: s.bus.env, cwd: s.machine.repo });
    assert.equal(held.code, 0, held.stderr);
    const who = holder.replace('/', '\\/');
    const refusal = new RegExp(`\\[agent-bus\\] src\\/auth\\.ts is reserved by ${who} for another \\d+ (?:min|h) \\(rewriting login\\): this edit was refused and the file is untouched\\. Ask ${who} with send_message to release it`);
    const requests: string[] = [];
    await withModel(driver, editsOnce(edit), async (model) => {
      ranCleanly(await s.run(model, 'update the login', {}, { edits: true }));
      requests.push(...model.requests);
      assert.equal(readFileSync(file, 'utf8'), original, 'the refused edit left the file untouched');
      const results = resultsIn(driver, model.requests);
      assert.ok(results.length > 0, `the model's ${driver.editTool} call came back with a result (${model.requests.length} requests)`);
      assert.ok(results.every((result) => refusal.test(result)), `the tool's result told the model who holds the file: ${JSON.stringify(results)}`);
      const denials = auditRows(s.bus, 'deny');
      assert.equal(denials.length, 1, JSON.stringify(denials));
      assert.match(String(denials[0]?.actor), new RegExp(`^shop/${driver.id}(-\\d+)?$`));
      assert.deepEqual([denials[0]?.to, denials[0]?.reserved], [holder, 'src/auth.ts']);
    });
    // A person releases the holder's reservations; the same edit then goes ahead.
    const released = runCli(['release', '--holder', holder, '--all'], { env: s.bus.env, cwd: s.machine.repo });
    assert.equal(released.code, 0, released.stderr);
    await withModel(driver, editsOnce(edit), async (model) => {
      ranCleanly(await s.run(model, 'update the login', {}, { edits: true }));
      requests.push(...model.requests);
      assert.equal(readFileSync(file, 'utf8'), edited, `the edit went ahead: ${JSON.stringify(resultsIn(driver, model.requests))}`);
      assert.ok(resultsIn(driver, model.requests).length > 0, `the model's ${driver.editTool} call came back with a result`);
      assert.ok(!model.requests.some((raw) => raw.includes('is reserved by')), 'nothing spoke of a reservation');
      assert.equal(auditRows(s.bus, 'deny').length, 1, 'no new refusal');
    });
    assertReceiptsHonest(s.bus, s.agent, requests, { noneExpected: true });
  }));

  test(`${label}: another agent's reservation refuses a shell command that redirects into the file, which stays untouched, and the model is told who holds it`, { skip: skip || (driver.shellTool === undefined ? `${label}'s driver runs no shell command` : false) }, local(async (s) => {
    const holder = driver.id === 'claude' ? 'shop/codex' : 'shop/claude';
    const { file } = sourceFile(s.machine.repo, 'auth.ts');
    const original = readFileSync(file, 'utf8');
    const held = runCli(['reserve', 'src/auth.ts', '--name', holder, '--reason', 'rewriting login', '--json'], { env: s.bus.env, cwd: s.machine.repo });
    assert.equal(held.code, 0, held.stderr);
    const who = holder.replace('/', '\\/');
    const refusal = new RegExp(`\\[agent-bus\\] src\\/auth\\.ts is reserved by ${who} for another \\d+ (?:min|h) \\(rewriting login\\): this edit was refused`);
    // A command the client would run without asking (it writes no file outside the work tree), so only the hook stands in its way.
    await withModel(driver, runsOnce('cd src && echo "export const version = 3;" >> auth.ts'), async (model) => {
      ranCleanly(await s.run(model, 'update the login', {}, { edits: true }));
      assert.equal(readFileSync(file, 'utf8'), original, 'the refused command left the file untouched');
      const results = resultsIn(driver, model.requests);
      assert.ok(results.length > 0, `the model's ${driver.shellTool ?? ''} call came back with a result (${model.requests.length} requests)`);
      assert.ok(results.some((result) => refusal.test(result)), `the tool's result told the model who holds the file: ${JSON.stringify(results)}`);
      const denials = auditRows(s.bus, 'deny');
      assert.equal(denials.length, 1, JSON.stringify(denials));
      assert.deepEqual([denials[0]?.to, denials[0]?.reserved], [holder, 'src/auth.ts']);
    });
  }));

  const launch = plan.launchChannels;
  if (launch) {
    test(`${label}: a launch AGENT_BUS_CHANNELS wins over ${launch.over}`, { skip }, local(async (s) => {
      publishTestNotices(s.bus);
      await withModel(driver, launch.callsATool ? callsInTurn(['channel_list']) : () => ({ text: 'noted' }), async (model) => {
        ranCleanly(await s.run(model, launch.callsATool ? 'check the fleet' : 'anything new?', { AGENT_BUS_CHANNELS: 'ops' }));
        if (launch.callsATool) assert.ok(model.requests.length >= 2, `a tool call was made (${model.requests.length} requests)`);
        assert.ok(model.requests.some((raw) => raw.includes(NOTICE_MARKERS.unsubscribed)), `the ops notice the launch value subscribes to reached the model (${model.requests.length} requests)`);
        assert.ok(
          model.requests.every((raw) => !raw.includes(NOTICE_MARKERS.critical) && !raw.includes(NOTICE_MARKERS.info)),
          `the repo's default (brain, amygdala) did not apply`,
        );
        assertReceiptsHonest(s.bus, s.agent, model.requests, { noneExpected: true });
      });
    }));
  }
}

/** A model that calls `tool` `times` times in the agent's turn, then says "done"; mail is sent at the turn's first request, after the prompt hook looked. */
function callsWhileMailComes(tool: string, times: number, send: () => void): Script {
  let calls = 0;
  return (request) => {
    if (!request.offers(tool)) return { text: 'a title' };
    if (calls === 0) send();
    if (calls >= times) return { text: 'done' };
    calls++;
    return call(tool);
  };
}

/**
 * A model that calls `tools` in order, one in each request of the agent's turn, then says "done".
 * (Not keyed on a request carrying a tool's result: Claude Code may put a hook's context after it.)
 */
function callsInTurn(tools: readonly string[]): Script {
  let next = 0;
  return (request) => {
    if (!request.offers(tools[0] as string)) return { text: 'a title' };
    return next < tools.length ? call(tools[next++] as string) : { text: 'done' };
  };
}

/**
 * Mail the model read by calling read_inbox: not in the first of the agent's turns (it came during
 * the turn), in the next one (the tool's result; or in some later one unless `nextRequest`), and its
 * receipt says delivered and read by read_inbox, honestly against every request.
 */
function assertReadThroughTool(bus: TempBus, agent: string, turns: readonly string[], requests: readonly string[], mail: string, nextRequest: boolean): void {
  assert.ok(!modelSaw(mail, turns.slice(0, 1)), 'the first request came before the mail');
  assert.ok(modelSaw(mail, turns.slice(1, nextRequest ? 2 : undefined)), `the tool's result carried the mail to the model (${requests.length} requests)`);
  assertReceiptsHonest(bus, agent, requests, { delivered: [{ body: mail, via: 'read_inbox', readVia: 'read_inbox' }] });
}

// ------------------------------------------------------------------ two clients in one repo

/**
 * Two clients of one repo (wired by one init for both, on one machine) writing the same file a few
 * seconds apart, each in its own run against its own fake model: the second writer's pre-tool hook
 * alerts it at once (its next request carries the line), and the first writer is mailed by the bus,
 * shown at its next run's prompt hook.
 */
export function collisionScenario(first: ClientDriver, second: ClientDriver): void {
  const skip = first.skip || second.skip;
  test(`${first.label} and ${second.label} write one file of their repo a few seconds apart: ${second.label}'s next request carries the collision alert, ${first.label}'s next run the bus's mail about it`, { skip }, async () => {
    const { bus, repo } = wiredRepo(first.id, second.id);
    try {
      const machine: Machine = { repo, home: bus.env.HOME as string, dir: bus.dir, env: bus.env };
      first.prepare(machine);
      second.prepare(machine);
      const { file, edit, edited } = sourceFile(repo, 'shared.ts');
      const requests: string[] = [];
      await withModel(first, editsOnce(edit), async (model) => {
        ranCleanly(await first.run(machine, model.url, 'bump the version', {}, { edits: true }));
        requests.push(...model.requests);
        assert.equal(readFileSync(file, 'utf8'), edited, `${first.label}'s edit went ahead`);
        assert.ok(!model.requests.some((raw) => raw.includes('you are both editing it')), 'the first write alone is no collision');
      });
      const again: FileEdit = { file, old: 'export const version = 2;', new: 'export const version = 3;' };
      await withModel(second, editsOnce(again), async (model) => {
        ranCleanly(await second.run(machine, model.url, 'bump the version again', {}, { edits: true }));
        assert.equal(readFileSync(file, 'utf8'), 'export const version = 3;\n', `${second.label}'s edit went ahead too: a collision only tells`);
        const alert = new RegExp(`\\[agent-bus\\] shop/${first.id}(-\\d+)? wrote src/shared\\.ts \\d+ s ago: you are both editing it; coordinate with send_message\\.`);
        const after = afterFirstTool(second, model.requests);
        assert.ok(after.length > 0, `${second.label}'s ${second.editTool} call came back (${model.requests.length} requests)`);
        assert.match(after[0] as string, alert, `the request after ${second.label}'s write carries the alert`);
        assert.ok(!model.requests.slice(0, model.requests.length - after.length).some((raw) => alert.test(raw)), 'not before the write');
        assertReceiptsHonest(bus, `shop/${second.id}`, model.requests, { noneExpected: true });
      });
      const collisions = auditRows(bus, 'collision');
      assert.equal(collisions.length, 1, JSON.stringify(collisions));
      const mailed = bus.rows<{ to_agent: string; body: string }>("SELECT to_agent, body FROM messages WHERE from_agent = 'agent-bus'");
      assert.equal(mailed.length, 1, JSON.stringify(mailed));
      const mail = mailed[0] as { to_agent: string; body: string };
      assert.match(mail.to_agent, new RegExp(`^shop/${first.id}(-\\d+)?$`));
      assert.match(mail.body, new RegExp(`^\\[agent-bus\\] shop/${second.id}(-\\d+)? is writing src/shared\\.ts too \\(you wrote it \\d+ s ago\\): you are both editing it; coordinate with send_message\\.$`));
      await withModel(first, () => ({ text: 'noted' }), async (model) => {
        ranCleanly(await first.run(machine, model.url, 'anything new?'));
        requests.push(...model.requests);
        assert.ok(modelSaw(mail.body, model.requests), `${first.label}'s next run was shown the bus's mail (${model.requests.length} requests)`);
        assertReceiptsHonest(bus, `shop/${first.id}`, requests, { delivered: [{ body: mail.body, via: 'hook-user-prompt', readVia: 'hook-user-prompt' }] });
      });
    } finally {
      bus.cleanup();
    }
  });
}

// ------------------------------------------------------------------ over a hub

/** A hub on a private bus, and a client machine wired to it by init --remote. */
export interface Remote {
  hubBus: TempBus;
  hub: RunningHub;
  machine: Machine;
  agent: string;
  run(model: FakeServer, prompt: string): Promise<ClientRun>;
}

export interface RemotePlan {
  /** Who the model's send_message speaks as on the hub. */
  sender: string;
  /** The session addresses the hub then holds for the client address, with whether a session id claimed each (undefined: not checked). */
  sessions?: Array<[string, boolean]>;
  /** Whether the model's read_inbox over the hub is put through its scenario. */
  readInbox: boolean;
}

async function remoteSetup(driver: ClientDriver): Promise<Remote & { close(): Promise<void> }> {
  const hubBus = tempBus();
  const hub = await startHub(hubBus);
  const agent = `shop/${driver.id}`;
  const { token } = createToken(hubBus, agent);
  // The human is on the hub's roster, so the model's mail to it is accepted.
  assert.equal(runCli(['send', 'joining', '--to', 'human'], { env: hubBus.env }).code, 0);
  const home = mkdtempSync(join(tmpdir(), 'agent-bus-client-machine-'));
  const repo = join(home, 'shop');
  mkdirSync(repo);
  assert.equal(spawnSync('git', ['init', '-q', repo]).status, 0);
  // agent-bus on PATH, as an installed one is: the committed files run the bare command.
  const env: NodeJS.ProcessEnv = { PATH: agentBusOnPath(home).PATH, HOME: home, NO_COLOR: '1', AGENT_BUS_TOKEN: token };
  const init = runCli(['init', '--clients', driver.id, '--remote', hub.url], { env: { ...env, ...initVersions(driver.initEnv) }, cwd: repo });
  assert.equal(init.code, 0, init.stderr);
  // Claude Code's and Codex's hooks are answered by their server, the relay, which asks the hub.
  const hooksFile = { claude: '.claude/settings.json', codex: '.codex/hooks.json' }[driver.id as 'claude' | 'codex'];
  if (hooksFile !== undefined) assert.match(readFileSync(join(repo, hooksFile), 'utf8'), /"type": "mcp_tool"/);
  const machine: Machine = { repo, home, dir: home, env };
  driver.prepare(machine);
  return {
    hubBus,
    hub,
    machine,
    agent,
    run: (model, prompt) => driver.run(machine, model.url, prompt),
    async close() {
      await hub.stop();
      hubBus.cleanup();
      rmSync(home, { recursive: true, force: true });
    },
  };
}

/** A test body with a hub and a client machine for `driver`, both gone afterwards whatever happens. */
export function withRemote(driver: ClientDriver, work: (r: Remote) => Promise<void>): () => Promise<void> {
  return async () => {
    const r = await remoteSetup(driver);
    try {
      await work(r);
    } finally {
      await r.close();
    }
  };
}

/** The session addresses the hub's bus holds for a client address, with whether a session id claimed each. */
function hubSessions(r: Remote): Array<[string, boolean]> {
  return r.hubBus.rows(`SELECT name, session_key FROM sessions WHERE client_address = '${r.agent}' ORDER BY name`).map((row) => [String(row.name), row.session_key !== null]);
}

/** The scenarios of one client wired to a hub, a test each. */
export function remoteScenarios(driver: ClientDriver, plan: RemotePlan): void {
  const { skip, label } = driver;

  test(`${label} wired by init --remote: the model's send_message reaches the hub as ${plan.sender}, and mail waiting before a turn reaches the model`, { skip }, withRemote(driver, async (r) => {
    const greeting = `hello over the hub from ${driver.id}`;
    const requests: string[] = [];
    await withModel(driver, greets(greeting), async (model) => {
      const run = await r.run(model, 'please greet the human');
      requests.push(...model.requests);
      ranCleanly(run);
      const got = inboxOf(r.hubBus, 'human').find((message) => message.body === greeting);
      assert.ok(got, `the tool call reached the hub (${model.requests.length} requests): ${run.stdout.slice(-1500)} ${run.stderr.slice(-1500)}`);
      assert.equal(got.from, plan.sender);
      if (plan.sessions) assert.deepEqual(hubSessions(r), plan.sessions);
    });
    const mail = mailBody('REMOTE-MAIL-BEFORE-THE-TURN');
    sendOk(r.hubBus, mail, r.agent);
    await withModel(driver, () => ({ text: 'noted' }), async (quiet) => {
      ranCleanly(await r.run(quiet, 'anything new?'));
      assert.ok(modelSaw(mail, quiet.requests), `the mail is in a model request (${quiet.requests.length} requests)`);
      assert.ok(!existsSync(join(r.machine.home, '.claude-agent-bus', 'bus.db')), 'the client machine has no database of its own');
      // Every request either model server recorded: the hub's receipts against all the client's model saw.
      assertReceiptsHonest(r.hubBus, r.agent, [...requests, ...quiet.requests], { delivered: [{ body: mail, via: 'hook-user-prompt', readVia: 'hook-user-prompt' }] });
    });
  }));

  if (plan.readInbox) {
    test(`${label} wired by init --remote: the model's read_inbox tool call over the hub shows it mail that arrived during the turn, delivered and read by read_inbox`, { skip }, withRemote(driver, async (r) => {
      const mail = mailBody('REMOTE-MAIL-READ-BY-THE-MODEL');
      // Mail arrives at the hub after the prompt hook looked, while the model works; it reads its inbox.
      const script = readsMailSentMidTurn(() => sendOk(r.hubBus, mail, r.agent), {}, () => 'handled it');
      await withModel(driver, script, async (model) => {
        ranCleanly(await r.run(model, 'work, and read your mail'));
        assertReadThroughTool(r.hubBus, r.agent, driver.turns(model.requests, 'read_inbox'), model.requests, mail, true);
      });
    }));
  }
}
