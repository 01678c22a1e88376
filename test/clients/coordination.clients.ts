/**
 * Tasks, presence and urgent mail in the real clients, offline:
 * - an interactive Claude Code session creates a task for Codex; `codex exec` takes it and completes
 *   it with a result through the MCP tools; the idle Claude Code is woken and its next model request
 *   carries the result. Meanwhile `agents` shows the session working during its turn and idle after;
 * - Claude Code in a turn of five tool calls: urgent mail sent during the second is in the model
 *   request after the third (the pre-tool hook); plain mail sent with it waits for the turn's end.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { json, runCli, type TempBus } from '../helpers/bus-env.js';
import { sleep, waitUntil } from '../helpers/wait.js';
import { claude, claudeOffline, codex } from './drivers.js';
import { offersTool, startFakeAnthropic, type Reply } from './fake-anthropic.js';
import { startFakeResponses, type ResponsesReply } from './fake-responses.js';
import { assertReceiptsHonest, CLIENT_BIN, endInteractive, mailBody, modelSaw, runClient, wiredRepo } from './harness.js';
import { interactiveSkip, startInteractiveClaude, type InteractiveClaude } from './interactive.js';

/** The state `agents --json` shows for the (first) Claude Code session of shop, if it is on the roster. */
function claudeSessionState(bus: TempBus): { name: string; state: string } | undefined {
  return json<Array<{ name: string; state: string }>>(runCli(['agents', '--json'], { env: bus.env })).find((row) => /^shop\/claude-\d+$/.test(row.name));
}

interface Task {
  id: string;
  title: string;
  state: string;
  creator: string;
  holder: string | null;
  result: string | null;
}

test("Claude Code hands Codex a task: Codex's model completes it with a result, the idle Claude Code is woken and its next request carries the result; agents shows the session working in its turn and idle after", { skip: interactiveSkip || codex.skip, timeout: 240_000 }, async () => {
  const s = wiredRepo('claude', 'codex');
  const result = `RESULT-MARKER-${Date.now().toString(36)}: the changelog has 3 breaking changes`;
  let stateInTurn: string | undefined;
  // Claude Code's model: in the agent's turn (the requests that offer our tools), create the task, then say so.
  // A turn that began before Claude Code had listed our server's tools (it connects MCP servers in the
  // background) is answered so, and the prompt is typed again.
  let toolsPending = 0;
  const lead = await startFakeAnthropic((body, raw): Reply => {
    if (!raw.includes('mcp__agent-bus__create_task')) {
      if (!offersTool(body, 'Bash')) return { text: 'a title' };
      toolsPending++;
      return { text: 'our tools are not offered yet' };
    }
    if (modelSaw(result, [raw])) return { text: 'thanks, noted the result' };
    if (stateInTurn === undefined) {
      stateInTurn = claudeSessionState(s.bus)?.state;
      return { tool: 'mcp__agent-bus__create_task', input: { title: 'summarize the changelog', to: 'shop/codex', body: 'list the breaking changes' } };
    }
    return { text: 'delegated it to Codex' };
  });
  let session: InteractiveClaude | undefined;
  try {
    // Our tools in every request, rather than found through Claude Code's tool search, so the fake model may call one at once.
    session = await startInteractiveClaude(s, lead.url, { ENABLE_TOOL_SEARCH: 'false' });
    // Its MCP server has connected (its session is on the roster), so the first request offers our tools.
    await waitUntil(() => claudeSessionState(s.bus) !== undefined, 'the session on the roster', 30_000, 100);
    for (let attempt = 1; ; attempt++) {
      const pending = toolsPending;
      session.type('hand the changelog summary to Codex');
      await waitUntil(() => (session?.pane().includes('delegated it to Codex') ?? false) || toolsPending > pending, 'the delegating turn', 60_000, 100).catch((error: unknown) => {
        throw new Error(`${(error as Error).message}; the terminal shows:\n${session?.pane() ?? ''}`);
      });
      if (toolsPending === pending) break;
      assert.ok(attempt < 10, 'Claude Code offered our tools within ten turns');
      // The turn ends (its Stop hook runs) before the next prompt is typed.
      await waitUntil(() => session?.pane().includes('not offered yet') ?? false, 'the turn answered', 20_000, 100);
      await sleep(1000);
    }
    assert.equal(stateInTurn, 'working', 'during its turn, agents showed the session working');
    await waitUntil(() => claudeSessionState(s.bus)?.state === 'idle', 'the session idle after its turn', 20_000, 100);
    const [task] = json<Task[]>(runCli(['task', 'list', '--json'], { env: s.bus.env }));
    assert.ok(task, 'the model made a task');
    assert.deepEqual([task.title, task.state, task.creator], ['summarize the changelog', 'open', claudeSessionState(s.bus)?.name]);

    // Codex's model takes the task and completes it with the result, through our MCP tools.
    let step = 0;
    const worker = await startFakeResponses((): ResponsesReply => {
      step++;
      if (step === 1) return { namespace: 'mcp__agent_bus', name: 'take_task', input: { id: task.id } };
      if (step === 2) return { namespace: 'mcp__agent_bus', name: 'complete_task', input: { id: task.id, result } };
      return { text: 'done' };
    });
    const before = lead.requests.length;
    try {
      const run = await codex.run({ repo: s.repo, home: s.bus.env.HOME as string, dir: s.bus.dir, env: s.bus.env }, worker.url, 'do the task you were given');
      assert.equal(run.code, 0, run.stderr.slice(-2000));
    } finally {
      await worker.close();
    }
    const done = json<Task>(runCli(['task', 'show', task.id, '--json'], { env: s.bus.env }));
    assert.deepEqual([done.state, done.result], ['done', result]);
    assert.match(done.holder ?? '', /^shop\/codex(-\d+)?$/);
    // The result wakes the idle Claude Code, and its next model request carries it.
    await waitUntil(() => modelSaw(result, lead.requests.slice(before)), 'a new turn of Claude Code carrying the result', 60_000, 100);
    const [mail] = s.bus.rows<{ body: string; task_id: string; task_state: string; priority: string }>(`SELECT body, task_id, task_state, priority FROM messages WHERE task_id IS NOT NULL`);
    assert.deepEqual({ ...mail, body: undefined }, { body: undefined, task_id: task.id, task_state: 'done', priority: 'urgent' }, 'the mail is marked as the task result');
    assert.match(readFileSync(s.bus.audit, 'utf8'), /"op":"wake".*"wake_driver":"socket","wake_status":"posted"/, 'woken by its MCP server through the inbox socket');
    await session.stop();
    assertReceiptsHonest(s.bus, 'shop/claude', lead.requests, { delivered: [{ body: mail?.body ?? '', via: 'hook-user-prompt' }] });
  } finally {
    await endInteractive(s, session, lead);
  }
});

test('Claude Code in a turn of five tool calls: urgent mail sent during the second is in the model request after the third, and plain mail sent with it waits for the turn to end', { skip: claude.skip, timeout: 180_000 }, async () => {
  const s = wiredRepo('claude');
  const urgent = mailBody('URGENT-MID-TURN');
  const plain = mailBody('PLAIN-MID-TURN');
  const sent: Array<Promise<void>> = [];
  let calls = 0;
  // The second call is a shell command that runs for three seconds; the mail is sent a second into it.
  const model = await startFakeAnthropic((_body, raw): Reply => {
    if (!raw.includes('mcp__agent-bus__list_agents')) return { text: 'a title' };
    if (calls >= 5) return { text: 'done' };
    calls++;
    if (calls !== 2) return { tool: 'mcp__agent-bus__list_agents', input: {} };
    sent.push(
      new Promise((resolve) =>
        setTimeout(() => {
          for (const [body, flags] of [[urgent, ['--urgent']], [plain, []]] as const) {
            assert.equal(runCli(['send', body, '--to', 'shop/claude', ...flags], { env: s.bus.env }).code, 0);
          }
          resolve();
        }, 1_000),
      ),
    );
    return { tool: 'Bash', input: { command: 'sleep 3', description: 'wait three seconds' } };
  });
  try {
    const run = await runClient(join(CLIENT_BIN, 'claude'), ['-p', 'check the fleet five times', '--output-format', 'json', '--allowedTools', 'Bash'], s.repo, { ...s.bus.env, ...claudeOffline(model.url) });
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    await Promise.all(sent);
    // The five calls' requests: the prompt's, then one carrying each call's result.
    const turn = model.requests.filter((raw) => raw.includes('mcp__agent-bus__list_agents')).slice(0, 6);
    assert.equal(turn.length, 6, `five tool calls were made (${model.requests.length} requests)`);
    const firstWith = turn.findIndex((raw) => modelSaw(urgent, [raw]));
    assert.equal(firstWith, 3, 'the urgent mail is first in the request after the third call (index 3: after calls 1, 2, 3)');
    assert.ok(!turn.some((raw) => modelSaw(plain, [raw])), 'the plain mail is not in the turn of five calls');
    assert.ok(modelSaw(plain, model.requests), 'the plain mail reached the model at the turn boundary');
    assertReceiptsHonest(s.bus, 'shop/claude', model.requests, {
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
