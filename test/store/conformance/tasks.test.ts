/**
 * The tasks port, on both engines: the state machine and who may make each move, the result's way
 * back to the creator, prerequisites (blocked, offered once done, cancelled when one fails), a
 * session's task offered again once the session is gone, and takers racing, in one process and in 16.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TaskRefusedError } from '../../../src/core/task-ops.js';
import { UnknownRecipientError } from '../../../src/model/errors.js';
import { shortId } from '../../../src/model/short-id.js';
import { json, readAudit, runCliAsync, tempBus } from '../../helpers/bus-env.js';
import { ENGINES, conformance, endedServers, fakeLiveness, startSession, type CoreBus } from './harness.js';

function taskEvents(ctx: CoreBus): Array<[string, string, string]> {
  return readAudit(ctx.paths.audit)
    .filter((row) => row.op === 'task')
    .map((row) => [String(row.event), String(row.state), String(row.actor)]);
}

async function refused(work: Promise<unknown>, pattern: RegExp): Promise<void> {
  await assert.rejects(work, (error: unknown) => error instanceof TaskRefusedError && pattern.test(error.message));
}

/** The mail an agent has waiting, as [from, urgent, body]. */
async function mailOf(ctx: CoreBus, reader: string): Promise<Array<[string, boolean, string]>> {
  return (await ctx.bus.inbox.read({ reader, via: 'read_inbox' })).map((message) => [message.from, message.urgent, message.body]);
}

conformance('tasks: offered as mail, taken once by one who may, closed by its holder with a result that comes back to its creator as urgent mail', async (ctx) => {
  await ctx.register(['shop/claude', 'shop/codex', 'lab/codex', 'human']);
  const task = await ctx.bus.tasks.create({ creator: 'shop/claude', title: 'fix the login test', to: 'shop/codex', body: 'see CI run 4121' });
  assert.deepEqual([task.state, task.to, task.holder, task.after], ['open', 'shop/codex', null, []]);
  const offered = await mailOf(ctx, 'shop/codex');
  assert.equal(offered.length, 1);
  assert.match(offered[0]?.[2] ?? '', new RegExp(`^\\[agent-bus task ${shortId(task.id)}\\] fix the login test\\nsee CI run 4121\\nTake it with take_task`));
  await refused(ctx.bus.tasks.take(task.id, 'lab/codex', false), /is for shop\/codex: lab\/codex may not take it/);
  await refused(ctx.bus.tasks.complete(task.id, 'shop/codex', 'too soon'), /only a taken task is completed/);
  // By the start of its id; a session of the client address it is for may take it.
  const taken = await ctx.bus.tasks.take(task.id.slice(0, 20), 'shop/codex-2', false);
  assert.deepEqual([taken.state, taken.holder], ['taken', 'shop/codex-2']);
  await refused(ctx.bus.tasks.take(task.id, 'shop/codex', false), /was taken by shop\/codex-2 at /);
  await refused(ctx.bus.tasks.complete(task.id, 'shop/codex', 'not mine'), /is held by shop\/codex-2, not shop\/codex/);
  await refused(ctx.bus.tasks.cancel(task.id, 'shop/codex-2'), /only its creator, or human, cancels it/);
  const done = await ctx.bus.tasks.complete(task.id, 'shop/codex-2', 'fixed in 3f2c1e');
  assert.deepEqual([done.state, done.result], ['done', 'fixed in 3f2c1e']);
  assert.deepEqual(await mailOf(ctx, 'shop/claude'), [['shop/codex-2', true, `[agent-bus task ${shortId(task.id)}] done: fix the login test\nresult: fixed in 3f2c1e`]]);
  await refused(ctx.bus.tasks.cancel(task.id, 'shop/claude'), /is done already/);
  assert.deepEqual(taskEvents(ctx), [
    ['create', 'open', 'shop/claude'],
    ['take', 'taken', 'shop/codex-2'],
    ['done', 'done', 'shop/codex-2'],
  ]);
  // Bad input is refused before anything is made.
  await assert.rejects(ctx.bus.tasks.create({ creator: 'shop/claude', title: 'x', to: 'shop/codx' }), (error: unknown) => error instanceof UnknownRecipientError && /No task was made/.test(error.message) && /shop\/codex/.test(error.message));
  await assert.rejects(ctx.bus.tasks.create({ creator: 'shop/claude', title: 'two\nlines', to: 'shop' }), /one line of text/);
  await assert.rejects(ctx.bus.tasks.create({ creator: 'shop/claude', title: '  ', to: 'shop' }), /must be non-empty/);
  await assert.rejects(ctx.bus.tasks.fail(task.id, 'shop/codex-2', ' '), /say why/);
  assert.equal((await ctx.bus.tasks.list({ states: null })).length, 1, 'nothing else was made');
});

conformance('tasks: to a repo or everyone, anyone there may take it; failing tells the creator; the creator or the person cancels, and the holder is told', async (ctx) => {
  await ctx.register(['shop/claude', 'shop/codex', 'lab/codex', 'human']);
  const repoTask = await ctx.bus.tasks.create({ creator: 'human', title: 'triage the open bugs', to: 'shop' });
  await refused(ctx.bus.tasks.take(repoTask.id, 'lab/codex', false), /is for shop: lab\/codex may not take it/);
  await ctx.bus.tasks.take(repoTask.id, 'shop/claude', false);
  const failed = await ctx.bus.tasks.fail(repoTask.id, 'shop/claude', 'the tracker is down');
  assert.deepEqual([failed.state, failed.result], ['failed', 'the tracker is down']);
  assert.deepEqual((await mailOf(ctx, 'human')).map(([from, urgent, body]) => [from, urgent, body.split('\n')[1]]), [['shop/claude', true, 'reason: the tracker is down']]);
  const everyone = await ctx.bus.tasks.create({ creator: 'shop/claude', title: 'say hello', to: '*' });
  await ctx.bus.tasks.take(everyone.id, 'lab/codex', false);
  await ctx.bus.inbox.read({ reader: 'lab/codex', via: 'read_inbox' });
  await refused(ctx.bus.tasks.cancel(everyone.id, 'shop/codex'), /only its creator/);
  const cancelled = await ctx.bus.tasks.cancel(everyone.id, 'human', 'not needed');
  assert.deepEqual([cancelled.state, cancelled.result], ['cancelled', 'not needed']);
  assert.deepEqual((await mailOf(ctx, 'lab/codex')).map(([from, urgent, body]) => [from, urgent, body]), [['human', true, `[agent-bus task ${shortId(everyone.id)}] cancelled by human: say hello; stop working on it.`]]);
  // Listings: by state, mine, created, repo.
  const open = await ctx.bus.tasks.create({ creator: 'shop/codex', title: 'review the diff', to: 'shop/claude' });
  assert.deepEqual((await ctx.bus.tasks.list({ states: ['open', 'taken'] })).map((task) => task.id), [open.id]);
  assert.deepEqual((await ctx.bus.tasks.list({ states: null, mine: 'shop/claude' })).map((task) => task.title), ['triage the open bugs', 'say hello', 'review the diff']);
  assert.deepEqual((await ctx.bus.tasks.list({ states: null, createdBy: 'shop/claude' })).map((task) => task.title), ['say hello']);
  assert.deepEqual((await ctx.bus.tasks.list({ states: null, repo: 'lab' })).map((task) => task.title), ['say hello']);
  assert.deepEqual((await ctx.bus.tasks.list({ states: ['failed'] })).map((task) => task.title), ['triage the open bugs']);
});

conformance('tasks: one that waits for others is blocked, offered once they are done, and cancelled when one fails; its creator is told', async (ctx) => {
  await ctx.register(['shop/claude', 'shop/codex', 'human']);
  const build = await ctx.bus.tasks.create({ creator: 'shop/claude', title: 'build', to: 'shop/codex' });
  const test_ = await ctx.bus.tasks.create({ creator: 'shop/claude', title: 'test', to: 'shop/codex' });
  const deploy = await ctx.bus.tasks.create({ creator: 'shop/claude', title: 'deploy', to: 'shop/codex', after: [build.id, test_.id.slice(0, 24)] });
  assert.deepEqual([deploy.state, deploy.after], ['blocked', [build.id, test_.id]]);
  assert.deepEqual((await mailOf(ctx, 'shop/codex')).map(([, , body]) => body.split('\n')[0]), [`[agent-bus task ${shortId(build.id)}] build`, `[agent-bus task ${shortId(test_.id)}] test`], 'a blocked task is not offered');
  await refused(ctx.bus.tasks.take(deploy.id, 'shop/codex', false), /waits for the tasks it is after/);
  await ctx.bus.tasks.take(build.id, 'shop/codex', false);
  await ctx.bus.tasks.complete(build.id, 'shop/codex', null);
  assert.equal((await ctx.bus.tasks.get(deploy.id)).state, 'blocked', 'one of two done');
  await ctx.bus.tasks.take(test_.id, 'shop/codex', false);
  await ctx.bus.tasks.complete(test_.id, 'shop/codex', 'green');
  assert.equal((await ctx.bus.tasks.get(deploy.id)).state, 'open');
  assert.deepEqual((await mailOf(ctx, 'shop/codex')).map(([, , body]) => body.split('\n')[0]), [`[agent-bus task ${shortId(deploy.id)}] deploy`], 'offered once both are done');

  const migrate = await ctx.bus.tasks.create({ creator: 'shop/claude', title: 'migrate', to: 'shop/codex' });
  const backfill = await ctx.bus.tasks.create({ creator: 'human', title: 'backfill', to: 'shop/codex', after: [migrate.id] });
  const report = await ctx.bus.tasks.create({ creator: 'human', title: 'report', to: 'shop/codex', after: [backfill.id] });
  await ctx.bus.tasks.take(migrate.id, 'shop/codex', false);
  await ctx.bus.tasks.fail(migrate.id, 'shop/codex', 'the lock timed out');
  assert.deepEqual([(await ctx.bus.tasks.get(backfill.id)).state, (await ctx.bus.tasks.get(backfill.id)).result], ['cancelled', `task ${migrate.id} it waited for is failed`]);
  assert.deepEqual([(await ctx.bus.tasks.get(report.id)).state, (await ctx.bus.tasks.get(report.id)).result], ['cancelled', `task ${backfill.id} it waited for is cancelled`], 'the cancel goes down the chain');
  assert.deepEqual((await mailOf(ctx, 'human')).map(([from, , body]) => [from, body.split(':')[0]]), [
    ['agent-bus', `[agent-bus task ${shortId(backfill.id)}] cancelled`],
    ['agent-bus', `[agent-bus task ${shortId(report.id)}] cancelled`],
  ]);
  // A task after one that failed, or one that is not there, is never made.
  await refused(ctx.bus.tasks.create({ creator: 'human', title: 'never', to: 'shop/codex', after: [migrate.id] }), /is failed, so this one could never start: no task was made/);
  await assert.rejects(ctx.bus.tasks.create({ creator: 'human', title: 'never', to: 'shop/codex', after: ['no-such-task'] }), /there is no task 'no-such-task'/);
});


conformance(
  "tasks: a session's task is offered again once its process is gone, and its creator is told; a person's stays taken",
  async (ctx) => {
    await ctx.register(['shop/claude', 'shop/codex', 'human']);
    const session = await startSession(ctx, 'shop/codex');
    const bySession = await ctx.bus.tasks.create({ creator: 'shop/claude', title: 'port the parser', to: 'shop' });
    const byPerson = await ctx.bus.tasks.create({ creator: 'shop/claude', title: 'write the notes', to: 'shop' });
    await ctx.bus.tasks.take(bySession.id, session.name, true);
    await ctx.bus.tasks.take(byPerson.id, 'shop/codex', false);
    await ctx.bus.inbox.read({ reader: 'shop/claude', via: 'read_inbox' });
    assert.deepEqual((await ctx.bus.tasks.list({ states: ['taken'] })).map((task) => task.holder), [session.name, 'shop/codex']);
    endedServers.add(session.pid);
    const listed = await ctx.bus.tasks.list({ states: null });
    assert.deepEqual(listed.map((task) => [task.title, task.state, task.holder]), [['port the parser', 'open', null], ['write the notes', 'taken', 'shop/codex']]);
    assert.deepEqual((await mailOf(ctx, 'shop/claude')).map(([from, urgent, body]) => [from, urgent, body]), [
      ['agent-bus', true, `[agent-bus task ${shortId(bySession.id)}] ${session.name}, who took it, is gone; the task is open again: port the parser`],
    ]);
    assert.ok((await mailOf(ctx, 'shop/codex')).some(([, , body]) => body.startsWith(`[agent-bus task ${shortId(bySession.id)}] (offered again: ${session.name} is gone) port the parser`)), 'offered again');
    assert.deepEqual(taskEvents(ctx).filter(([event]) => event === 'reopen'), [['reopen', 'open', 'agent-bus']]);
    await ctx.bus.tasks.take(bySession.id, 'shop/codex', false);
  },
  {},
  fakeLiveness,
);

conformance('tasks: 16 takers racing for one task in one process: exactly one has it, the others are told who', async (ctx) => {
  const takers = Array.from({ length: 16 }, (_, index) => `shop/agent-${index + 1}`);
  await ctx.register([...takers, 'human']);
  const task = await ctx.bus.tasks.create({ creator: 'human', title: 'contested', to: 'shop' });
  const outcomes = await Promise.allSettled(takers.map((taker) => ctx.bus.tasks.take(task.id, taker, false)));
  const won = outcomes.filter((outcome) => outcome.status === 'fulfilled');
  assert.equal(won.length, 1);
  const holder = (await ctx.bus.tasks.get(task.id)).holder;
  for (const outcome of outcomes) {
    if (outcome.status === 'rejected') assert.match(String(outcome.reason.message), new RegExp(`was taken by ${holder}`));
  }
  assert.equal(taskEvents(ctx).filter(([event]) => event === 'take').length, 1);
});

for (const engine of ENGINES) {
  test(`${engine}: tasks: 16 processes racing to take one task: exactly one takes it`, async () => {
    const bus = tempBus({}, { engine });
    try {
      const takers = Array.from({ length: 16 }, (_, index) => `shop/agent-${index + 1}`);
      const made = await runCliAsync(['task', 'add', 'contested', '--to', '*', '--json'], { env: bus.env });
      assert.equal(made.code, 0, made.stderr);
      const id = json<{ id: string }>(made).id;
      for (const taker of takers) assert.equal((await runCliAsync(['send', 'joining', '--to', '*', '--name', taker], { env: bus.env })).code, 0);
      const runs = await Promise.all(takers.map((taker) => runCliAsync(['task', 'take', id, '--name', taker, '--json'], { env: bus.env })));
      const winners = runs.filter((run) => run.code === 0);
      assert.equal(winners.length, 1, runs.map((run) => run.stderr).join(''));
      const holder = json<{ holder: string }>(winners[0] as Parameters<typeof json>[0]).holder;
      for (const lost of runs.filter((run) => run.code !== 0)) {
        assert.equal(lost.code, 1);
        assert.match(lost.stderr, new RegExp(`^agent-bus: task ${id} was taken by ${holder} at \\S+\\n$`));
      }
      const takes = readAudit(bus.audit).filter((row) => row.op === 'task' && row.event === 'take');
      assert.deepEqual(takes.map((row) => row.actor), [holder]);
    } finally {
      bus.cleanup();
    }
  });
}
