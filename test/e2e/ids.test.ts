/**
 * Every id on screen works as input: the ids the CLI prints (short, at most twelve characters, and
 * unique even for ids made in the same millisecond) are taken back as they were shown by every
 * command that takes that kind of id, and by the MCP tools; so is any unique start of either form.
 * An ambiguous start exits 2 naming the candidates; a thread nobody knows is never started.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { agentEnv, register } from '../helpers/agents.js';
import { json, messageLines, readAudit, runCli, withTempBus, type TempBus } from '../helpers/bus-env.js';
import { createToken, withHub } from '../helpers/hub.js';
import { connect } from '../helpers/mcp.js';

const SHORT = /^[0-9a-f]{12}$/;

interface SentJson {
  message_ids: string[];
  fanout_id: string | null;
  thread_id: string;
}

function ok(bus: TempBus, args: string[], env: NodeJS.ProcessEnv = bus.env): string {
  const result = runCli(args, { env });
  assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

/** The ids a line of human output shows: each run of twelve hex digits standing alone. */
function shownIds(text: string): string[] {
  return [...text.matchAll(/(?<![0-9a-f-])[0-9a-f]{12}(?![0-9a-f-])/g)].map((match) => match[0]);
}

test('the ids send, inbox, tail and search print are taken back by status, read, thread and send --thread', withTempBus((bus) => {
  const codex = agentEnv(bus, 'shop/codex', '/repos/shop');
  register(codex);
  const sent = ok(bus, ['send', 'please review the login form', '--to', 'shop/codex']);
  const [messageId, threadId] = shownIds(sent);
  assert.ok(messageId && threadId, `send shows the message and its thread: ${sent}`);
  assert.match(sent, new RegExp(`^sent ${messageId} .*\\(thread ${threadId}\\)\\n$`));

  // Each listing's ids, fed back to each command that takes that kind.
  const inbox = ok(bus, ['inbox', '--peek'], codex);
  const tail = ok(bus, ['tail', '--limit', '3']);
  const search = ok(bus, ['search', 'login']);
  for (const listing of [sent, inbox, search]) {
    const [message, thread] = shownIds(listing.split('\n')[0] as string);
    assert.equal(message, messageId, `the message's id as shown in ${listing}`);
    assert.equal(thread, threadId, `its thread's id as shown in ${listing}`);
  }
  assert.ok(shownIds(tail).includes(messageId), `tail shows the send's id: ${tail}`);

  const status = json<{ message_id: string; state: string }>(runCli(['status', messageId, '--json'], { env: bus.env }));
  assert.ok(status.message_id.endsWith(messageId) && status.message_id.length === 36, 'status takes the short id; --json has the whole one');
  assert.match(ok(bus, ['read', messageId]), /please review the login form/);
  assert.match(ok(bus, ['thread', threadId]), /please review the login form/);
  assert.match(ok(bus, ['thread', messageId]), /please review the login form/, 'a message names its thread');

  // Starts of either form: the short id's, and the whole id's (dashes or none).
  const whole = json<SentJson>(runCli(['send', 'a second', '--to', 'shop/codex', '--thread', threadId, '--json'], { env: bus.env }));
  assert.ok(whole.thread_id.replace(/-/g, '').startsWith(threadId), 'send --thread continues the thread shown');
  for (const given of [messageId.slice(0, 6), status.message_id.slice(0, 20), status.message_id.replace(/-/g, '').slice(0, 16)]) {
    assert.equal(json<{ message_id: string }>(runCli(['status', given, '--json'], { env: bus.env })).message_id, status.message_id, `status ${given}`);
  }
  const reply = json<SentJson>(runCli(['send', 'a reply', '--to', 'human', '--thread', messageId.slice(0, 8), '--json'], { env: codex }));
  assert.equal(reply.thread_id, whole.thread_id, 'a reply naming the message continues its thread');
  const threadJson = json<Array<{ body: string }>>(runCli(['thread', threadId.slice(0, 5), '--json'], { env: bus.env }));
  assert.deepEqual(threadJson.map((message) => message.body), ['please review the login form', 'a second', 'a reply']);

  // The search's --thread takes the short form too.
  assert.equal(json<unknown[]>(runCli(['search', 'reply', '--thread', threadId, '--json'], { env: bus.env })).length, 1);
}));

test('send --thread with an id that names no thread is refused and sends nothing; a thread is never started under a typo', withTempBus((bus) => {
  register(agentEnv(bus, 'shop/codex', '/repos/shop'));
  const before = bus.rows<{ n: number }>('SELECT COUNT(*) AS n FROM messages')[0]?.n;
  const refused = runCli(['send', 'hello', '--to', 'shop/codex', '--thread', 'deadbeef1234'], { env: bus.env });
  assert.equal(refused.code, 1);
  assert.equal(refused.stdout, '');
  assert.match(refused.stderr, /^agent-bus: no thread 'deadbeef1234': /);
  assert.equal(bus.rows<{ n: number }>('SELECT COUNT(*) AS n FROM messages')[0]?.n, before, 'nothing was sent');
  assert.deepEqual(bus.rows("SELECT thread_id FROM messages WHERE thread_id = 'deadbeef1234'"), []);
}));

test('short ids are unique and twelve characters, even for ids made in the same millisecond; --json keeps the whole id', withTempBus((bus) => {
  for (const name of ['shop/claude', 'shop/codex', 'shop/gemini', 'shop/copilot', 'shop/opencode']) register(agentEnv(bus, name, '/repos/shop'));
  // One fan-out: its copies' ids are made in one go, so they share their time-ordered start.
  const fanOut = json<SentJson>(runCli(['send', 'to the whole repo', '--to', 'shop', '--json'], { env: bus.env }));
  assert.equal(fanOut.message_ids.length, 5);
  const starts = new Set(fanOut.message_ids.map((id) => id.slice(0, 8)));
  assert.ok(starts.size < 5, 'whole ids made together share their start (which is why they are not shown)');
  const shorts = fanOut.message_ids.map((id) => id.slice(-12));
  assert.equal(new Set(shorts).size, 5);
  for (const agent of ['shop/claude', 'shop/codex']) {
    const line = ok(bus, ['inbox', '--peek', '--short'], agentEnv(bus, agent, '/repos/shop'));
    for (const id of shownIds(line)) assert.match(id, SHORT);
  }
  // Tasks made back to back.
  const made = Array.from({ length: 12 }, (_, index) => ok(bus, ['task', 'add', `task ${index}`, '--to', 'shop']).trim());
  for (const id of made) assert.match(id, SHORT);
  assert.equal(new Set(made).size, made.length);
  const listed = ok(bus, ['task', 'list']).trimEnd().split('\n').map((line) => line.split(' ')[0]);
  assert.deepEqual([...listed].sort(), [...made].sort(), 'task list shows the ids add printed');
  const full = json<Array<{ id: string }>>(runCli(['task', 'list', '--json'], { env: bus.env })).map((row) => row.id);
  for (const id of full) assert.equal(id.length, 36, '--json has the whole id');
}));

test('the task ids add and list print work in show, take, done and --after; an ambiguous start exits 2 naming the candidates', withTempBus((bus) => {
  const codex = agentEnv(bus, 'shop/codex', '/repos/shop');
  register(codex);
  const first = ok(bus, ['task', 'add', 'fix the login test', '--to', 'shop/codex']).trim();
  const second = ok(bus, ['task', 'add', 'write the docs', '--to', 'shop/codex']).trim();
  const blocked = ok(bus, ['task', 'add', 'ship it', '--to', 'shop/codex', '--after', `${first},${second.slice(0, 5)}`]);
  assert.match(blocked, /^[0-9a-f]{12} {2}\(blocked until /);
  assert.match(ok(bus, ['task', 'show', first]), new RegExp(`^task ${first}: fix the login test\\n`));
  assert.match(ok(bus, ['task', 'take', first.slice(0, 4)], codex), /^took /);
  assert.match(ok(bus, ['task', 'done', first, '--result', 'fixed'], codex), /shop\/codex|human is told/);

  // Two tasks whose short forms begin alike: their ids are given a shared start.
  const ids = json<Array<{ id: string; title: string }>>(runCli(['task', 'list', '--state', 'all', '--json'], { env: bus.env }));
  const [a, b] = ids.filter((row) => row.title !== 'fix the login test');
  assert.ok(a && b);
  bus.sql(`UPDATE tasks SET task_id = '${a.id.slice(0, 24)}abcd00000001' WHERE task_id = '${a.id}'`);
  bus.sql(`UPDATE task_prerequisites SET task_id = '${a.id.slice(0, 24)}abcd00000001' WHERE task_id = '${a.id}'`);
  bus.sql(`UPDATE task_prerequisites SET prerequisite_id = '${a.id.slice(0, 24)}abcd00000001' WHERE prerequisite_id = '${a.id}'`);
  bus.sql(`UPDATE tasks SET task_id = '${b.id.slice(0, 24)}abcd00000002' WHERE task_id = '${b.id}'`);
  bus.sql(`UPDATE task_prerequisites SET task_id = '${b.id.slice(0, 24)}abcd00000002' WHERE task_id = '${b.id}'`);
  bus.sql(`UPDATE task_prerequisites SET prerequisite_id = '${b.id.slice(0, 24)}abcd00000002' WHERE prerequisite_id = '${b.id}'`);
  const ambiguous = runCli(['task', 'show', 'abcd'], { env: bus.env });
  assert.equal(ambiguous.code, 2, ambiguous.stderr);
  assert.equal(ambiguous.stdout, '');
  assert.equal(messageLines(ambiguous.stderr).length, 1);
  assert.match(ambiguous.stderr, /^agent-bus: 'abcd' is the start of more than one task: abcd0000000[12] '[^']+', abcd0000000[12] '[^']+'\. Give more of the id\.\n/);
  assert.match(ok(bus, ['task', 'show', 'abcd00000002']), /^task abcd00000002: /);
  assert.equal(readAudit(bus.audit).filter((row) => row.op === 'task').length, 5, 'three made, one taken, one done: a refused show changed nothing');
}));

test('the MCP tools take the ids as the CLI showed them: message_status, read_thread, send_message and the task tools', withTempBus(async (bus) => {
  const env = agentEnv(bus, 'shop/codex', '/repos/shop');
  register(env);
  const sent = ok(bus, ['send', 'over to you', '--to', 'shop/codex']);
  const [messageId, threadId] = shownIds(sent);
  const taskId = ok(bus, ['task', 'add', 'port the parser', '--to', 'shop/codex']).trim();
  const server = await connect(env);
  try {
    const status = await server.call<{ message_id: string }>('message_status', { message_id: messageId });
    assert.ok(status.message_id.endsWith(messageId as string));
    const thread = await server.call<Array<{ body: string }>>('read_thread', { thread_id: threadId });
    assert.deepEqual(thread.map((message) => message.body), ['over to you']);
    const reply = await server.call<{ thread_id: string }>('send_message', { to: 'human', body: 'on it', thread_id: threadId });
    assert.ok(reply.thread_id.replace(/-/g, '').startsWith(threadId as string), 'the reply is on the thread shown');
    assert.match(await server.fails('send_message', { to: 'human', body: 'lost', thread_id: 'feedface0000' }), /no thread 'feedface0000'/);
    const taken = await server.call<{ id: string; holder: string }>('take_task', { id: taskId });
    assert.ok(taken.id.endsWith(taskId) && taken.holder.startsWith('shop/codex'));
    assert.equal((await server.call<{ state: string }>('complete_task', { id: taskId.slice(0, 6), result: 'ported' })).state, 'done');
  } finally {
    await server.close();
  }
}));

test('over the hub, the remote CLI takes the short ids the hub\'s bus printed', withHub({}, async (bus, hub) => {
  const token = createToken(bus, 'shop/claude');
  const remote: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: bus.dir, NO_COLOR: '1', AGENT_BUS_URL: hub.url, AGENT_BUS_TOKEN: token.token };
  assert.equal(runCli(['send', 'joining', '--to', '*'], { env: remote }).code, 0);
  const sent = ok(bus, ['send', 'from the person', '--to', 'shop/claude'], remote);
  const [messageId, threadId] = shownIds(sent);
  assert.match(ok(bus, ['status', messageId as string], remote), /from|✓/);
  assert.match(ok(bus, ['thread', threadId as string], remote), /from the person/);
  const replied = json<SentJson>(runCli(['send', 'again', '--to', 'shop/claude', '--thread', threadId as string, '--json'], { env: remote }));
  assert.ok(replied.thread_id.replace(/-/g, '').startsWith(threadId as string));
  const taskId = ok(bus, ['task', 'add', 'over the hub', '--to', 'shop/claude'], remote).trim();
  assert.match(taskId, SHORT);
  assert.match(ok(bus, ['task', 'show', taskId.slice(0, 5)], remote), /over the hub/);

  // The remote CLI exits as a local one would: 1 for what is not there, 2 for bad usage and an ambiguous start.
  const other = ok(bus, ['task', 'add', 'another', '--to', 'shop/claude'], remote).trim();
  for (const [id, tail] of [[taskId, 'abcd00000001'], [other, 'abcd00000002']] as const) {
    const whole = bus.rows<{ task_id: string }>(`SELECT task_id FROM tasks WHERE task_id LIKE '%${id}'`)[0]?.task_id as string;
    bus.sql(`UPDATE tasks SET task_id = '${whole.slice(0, 24)}${tail}' WHERE task_id = '${whole}'`);
  }
  const ambiguous = runCli(['task', 'show', 'abcd'], { env: remote });
  assert.equal(ambiguous.code, 2, ambiguous.stderr);
  assert.match(ambiguous.stderr, /^agent-bus: 'abcd' is the start of more than one task: abcd0000000[12] '(?:over the hub|another)', abcd0000000[12] '(?:over the hub|another)'\. Give more of the id\.\n$/);
  const missing = runCli(['task', 'show', 'ffff0000ffff'], { env: remote });
  assert.deepEqual([missing.code, missing.stderr], [1, "agent-bus: there is no task 'ffff0000ffff'\n"]);
  const lost = runCli(['send', 'x', '--to', 'shop/claude', '--thread', 'feedface0000'], { env: remote });
  assert.equal(lost.code, 1, lost.stderr);
  const badState = runCli(['task', 'list', '--state', 'stuck'], { env: remote });
  assert.equal(badState.code, 2, badState.stderr);
  assert.match(badState.stderr, /\nUsage: agent-bus task /, 'bad usage over the hub is followed by the usage line too');
}));
