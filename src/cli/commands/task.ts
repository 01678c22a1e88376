/**
 * `agent-bus task`: make a task, take it, close it with a result (which goes back to its creator),
 * cancel it, look at one or a list, and wait for one to close. Here or over a hub, as the speaker.
 */
import { openClient } from '../../connect.js';
import { askedName, readStdin } from '../context.js';
import { parseDuration } from '../../model/duration.js';
import { oneLine, pad, printable, shortIdText } from '../../render/format.js';
import { when } from '../../model/when.js';
import type { TaskView } from '../../core/task-ops.js';
import { UsageError } from '../args.js';
import { addTaskAndRun } from '../task-run.js';
import { openBusHere, refuseOverHub } from '../../runtime.js';
import type { CommandIo, CommandRunner, ParsedArgs } from '../spec.js';

/** The exit status of a wait whose task failed or was cancelled; 4 when it ran out of time, as `send --wait`. */
export const TASK_NOT_DONE = 5;
const WAIT_TIMED_OUT = 4;

const ACTIONS = ['add', 'take', 'done', 'fail', 'cancel', 'show', 'list', 'wait'] as const;
type Action = (typeof ACTIONS)[number];

function text(args: ParsedArgs, name: string): string | null {
  const value = args.values[name];
  return typeof value === 'string' ? value : null;
}

/** A flag's text, or standard input when it is `-`. */
async function textOrStdin(args: ParsedArgs, name: string, io: CommandIo): Promise<string | null> {
  const value = text(args, name);
  return value === '-' ? readStdin(io.stdin(), `task: --${name}`) : value;
}

/** The one id an action takes. */
function idOf(action: Action, rest: string[]): string {
  const [id, ...extra] = rest;
  if (id === undefined || id.trim() === '') throw new UsageError(`task ${action}: give the task's id (or the start of one). See 'agent-bus task --help'.`);
  if (extra.length > 0) throw new UsageError(`task ${action}: too many arguments. See 'agent-bus task --help'.`);
  return id;
}

/** A task in one line: its short id, state, when it was made, who it is for or who holds it, and its title. */
function line(task: TaskView): string {
  const who = task.holder !== null ? `held by ${task.holder}` : `for ${task.to}`;
  return `${shortIdText(task.id)}  ${task.state.padEnd(9)}  ${pad(when(task.created_at), 12)}  ${who}  ${oneLine(task.title)}`;
}

/** One task in full, as `show` prints it. */
function details(task: TaskView): string {
  const lines = [
    `task ${shortIdText(task.id)}: ${oneLine(task.title)}`,
    `  state    ${task.state}${task.holder === null ? '' : ` (${task.holder})`}`,
    `  for      ${task.to}`,
    `  made by  ${task.creator}, ${when(task.created_at)}`,
    `  updated  ${when(task.updated_at)}`,
  ];
  if (task.after !== undefined && task.after.length > 0) lines.push(`  after    ${task.after.map(shortIdText).join(', ')}`);
  // Bodies and results are untrusted text: each line printable, indented under its heading.
  if (task.result !== null) lines.push(`  ${task.state === 'done' ? 'result' : 'reason'}   ${task.result.split(/\r?\n/).map(printable).join('\n           ')}`);
  if (task.body !== null) lines.push('', ...task.body.split(/\r?\n/).map((row) => `  ${printable(row)}`));
  return `${lines.join('\n')}\n`;
}

export const run: CommandRunner = async (args, io) => {
  const [given, ...rest] = args.positionals;
  if (!ACTIONS.includes(given as Action)) {
    throw new UsageError(`task: expected ${ACTIONS.join(', ')}, got ${given === undefined ? 'nothing' : `'${given}'`}. See 'agent-bus task --help'.`);
  }
  const action = given as Action;
  const json = Boolean(args.values.json);
  // Checked before anything is done: a wait's timeout, an add's address.
  const timeoutMs = action === 'wait' ? parseTimeout(text(args, 'timeout') ?? '10m') : 0;
  if (action === 'add' && (text(args, 'to') ?? '').trim() === '') throw new UsageError("task add: say who may take it with --to NAME, a repo, or '*'. See 'agent-bus task --help'.");
  const as = askedName(args.values.name, io.env);
  const client = openClient(io.env, { cwd: io.cwd, as });
  const print = (task: TaskView, said: string): void => io.stdout.write(json ? `${JSON.stringify(task)}\n` : `${said}\n`);
  try {
    switch (action) {
      case 'add': {
        const [title, ...extra] = rest;
        if (title === undefined || extra.length > 0) throw new UsageError("task add: give the title as one argument (quote it). See 'agent-bus task --help'.");
        const after = (text(args, 'after') ?? '').split(',').map((id) => id.trim()).filter((id) => id !== '');
        const runWith = text(args, 'run');
        if (runWith !== null) {
          if (after.length > 0) throw new UsageError('task add: --run starts an agent at once, and a task with --after waits: spawn --task ID once it is open');
          refuseOverHub(io.env);
          const bus = openBusHere(io.env);
          const made = await addTaskAndRun(
            bus,
            { client: runWith, title, to: text(args, 'to') as string, body: await textOrStdin(args, 'body', io), after, repoPath: text(args, 'repo'), label: text(args, 'label'), yolo: Boolean(args.values.yolo), worktree: Boolean(args.values.worktree), as },
            io.env,
            io.cwd,
          ).finally(() => bus.close());
          if (json) io.stdout.write(`${JSON.stringify({ ...made.task, spawned: made.spawned })}\n`);
          else {
            io.stdout.write(`${shortIdText(made.task.id)}\n`);
            io.stderr.write(`${made.spawned.name} holds it (${made.spawned.state}); follow it: agent-bus logs ${made.spawned.name} -f\n`);
          }
          return 0;
        }
        const task = await client.tasks.create({ title, to: text(args, 'to') as string, body: await textOrStdin(args, 'body', io), after });
        // The short id alone, so `id=$(agent-bus task add …)` gives what every task command takes.
        print(task, task.state === 'blocked' ? `${shortIdText(task.id)}  (blocked until ${after.join(', ')} ${after.length === 1 ? 'is' : 'are'} done)` : shortIdText(task.id));
        return 0;
      }
      case 'take': {
        const task = await client.tasks.take(idOf(action, rest));
        print(task, `took ${line(task)}`);
        return 0;
      }
      case 'done': {
        const task = await client.tasks.complete(idOf(action, rest), await textOrStdin(args, 'result', io));
        print(task, `${line(task)}: ${task.creator} is told`);
        return 0;
      }
      case 'fail': {
        const id = idOf(action, rest);
        const reason = text(args, 'reason');
        if (reason === null || reason.trim() === '') throw new UsageError("task fail: say why with --reason TEXT. See 'agent-bus task --help'.");
        const task = await client.tasks.fail(id, reason);
        print(task, `${line(task)}: ${task.creator} is told`);
        return 0;
      }
      case 'cancel': {
        const task = await client.tasks.cancel(idOf(action, rest), text(args, 'reason'));
        print(task, line(task));
        return 0;
      }
      case 'show': {
        const task = await client.tasks.get(idOf(action, rest));
        io.stdout.write(json ? `${JSON.stringify(task)}\n` : details(task));
        return 0;
      }
      case 'list': {
        if (rest.length > 0) throw new UsageError("task list: takes no arguments (--state, --mine, --created, --repo). See 'agent-bus task --help'.");
        const tasks = await client.tasks.list({ state: text(args, 'state'), mine: args.values.mine === true, created: args.values.created === true, repo: text(args, 'repo')?.trim() || null });
        if (json) io.stdout.write(`${JSON.stringify(tasks)}\n`);
        else io.stdout.write(tasks.length === 0 ? '(no tasks)\n' : `${tasks.map(line).join('\n')}\n`);
        return 0;
      }
      case 'wait': {
        const { task, closed } = await client.tasks.wait(idOf(action, rest), timeoutMs);
        if (!closed) {
          if (json) io.stdout.write(`${JSON.stringify(task)}\n`);
          io.stderr.write(`agent-bus: task ${shortIdText(task.id)} is still ${task.state} after ${text(args, 'timeout') ?? '10m'}\n`);
          return WAIT_TIMED_OUT;
        }
        print(task, `${line(task)}${task.result === null ? '' : `\n${task.state === 'done' ? 'result' : 'reason'}: ${printable(task.result)}`}`);
        return task.state === 'done' ? 0 : TASK_NOT_DONE;
      }
    }
  } finally {
    await client.close();
  }
};

function parseTimeout(given: string): number {
  return parseDuration(given, { what: '--timeout' });
}
