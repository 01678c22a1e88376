/** The tools of tasks: create_task, take_task, complete_task, fail_task, cancel_task, get_task and list_tasks. */
import { z } from 'zod';
import { taskStatesOf } from '../core/task-ops.js';
import type { ToolKit } from './tool-kit.js';

export function taskTools(kit: ToolKit): void {
  const { bus, session, tool, optionalText } = kit;
  tool(
    'create_task',
    {
      description:
        "Hand work to another agent and get its result back: use a task rather than a message when you need the work done and its outcome reported (a message is for words). to: a name, a repo (the first agent there to take it has it) or '*'. after: ids of tasks that must be done first (it waits, blocked). The result comes back to you as urgent mail when it is completed or failed.",
      inputSchema: { title: z.string(), to: z.string(), body: optionalText(), after: z.array(z.string()).nullish() },
    },
    async ({ title, to, body, after }) => bus.tasks.create({ creator: session.name, title, to, body: body ?? null, after: after ?? [] }),
  );
  tool(
    'take_task',
    { description: 'Take an open task offered to you (by id, or the start of one): the first to take it has it, and the others are told who.', inputSchema: { id: z.string().min(1) } },
    // A session's task is offered again if the session ends with it unfinished.
    async ({ id }) => bus.tasks.take(id, session.name, session.holdsSession),
  );
  tool(
    'complete_task',
    { description: 'Close a task you hold as done, with its result: its creator gets the result as urgent mail.', inputSchema: { id: z.string().min(1), result: optionalText() } },
    async ({ id, result }) => bus.tasks.complete(id, session.name, result ?? null),
  );
  tool(
    'fail_task',
    { description: 'Close a task you hold as failed, saying why: its creator is told, and tasks waiting for it are cancelled.', inputSchema: { id: z.string().min(1), reason: z.string() } },
    async ({ id, reason }) => bus.tasks.fail(id, session.name, reason),
  );
  tool(
    'cancel_task',
    { description: 'Cancel a task you made that is not closed: its holder is told to stop.', inputSchema: { id: z.string().min(1), reason: optionalText() } },
    async ({ id, reason }) => bus.tasks.cancel(id, session.name, reason ?? null),
  );
  tool(
    'get_task',
    { description: 'One task: its state (open, taken, done, failed, cancelled, blocked), holder, result, and the tasks it waits for.', inputSchema: { id: z.string().min(1) } },
    async ({ id }) => bus.tasks.get(id),
  );
  tool(
    'list_tasks',
    {
      description: "Tasks, oldest first. state: open, taken, done, failed, cancelled, blocked or all (default: open and taken). mine: those offered to you or held by you; created: those you made; repo: those of a repo.",
      inputSchema: { state: optionalText(), mine: z.boolean().nullish(), created: z.boolean().nullish(), repo: optionalText() },
    },
    async ({ state, mine, created, repo }) => ({
      tasks: await bus.tasks.list({
        states: taskStatesOf(state),
        mine: mine ? session.name : null,
        createdBy: created ? session.name : null,
        repo: repo?.trim() || null,
      }),
    }),
  );
}
