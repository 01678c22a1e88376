/**
 * Tasks: work handed to a name, a repo or everyone, taken by exactly one agent, and closed with a
 * result that comes back to its creator as urgent mail. A task may wait for others (`blocked` until
 * they are done, cancelled when one fails); a taken task whose session is gone is offered again.
 * Offers and results travel as mail, so they reach agents at their hooks and wake idle ones.
 */
import { textRow, type AuditRow } from '../audit/record.js';
import { BusError, InvalidInputError, NotFoundError, TooLargeError } from '../model/errors.js';
import { stampOf, type Clock } from '../model/clock.js';
import { timeOrderedId } from '../model/ids.js';
import { quoted } from '../model/quote.js';
import { idLookup, shortId } from '../model/short-id.js';
import { longEnoughToLookUp, oneLineHint, pickNamed } from './id-resolve.js';
import { CLOSED_TASK_STATES, TASK_STATES, type Registration, type TaskRecord, type TaskState } from '../model/records.js';
import type { Store } from '../store/ports.js';
import type { TaskChange } from '../store/ports/tasks.js';
import type { AuditSink } from './audit-sink.js';
import type { ChangeFeed } from '../store/ports/changes.js';
import type { Mail } from './mail-ops.js';
import { BROADCAST, BUS_NAME, clientAddressOf, HUMAN, repoOf } from './names.js';
import { eachChange } from './store-changes.js';
import { LIST_LIMIT, TaskReminders, taskView, type TaskView } from './task-reminders.js';

export { taskView, type TaskView } from './task-reminders.js';

/** The longest title a task keeps: it is shown in one line in lists, mail and the dashboard. */
export const MAX_TITLE_LENGTH = 200;
/** The most prerequisites one task waits for. */
export const MAX_PREREQUISITES = 50;
/** The fallback look of a wait when no hint comes. */
const POLL_MS = 2_000;

/** A move of a task refused: it is in another state, or the asker may not make it. */
export class TaskRefusedError extends BusError {}

export interface CreateTaskRequest {
  creator: string;
  title: string;
  to: string;
  body?: string | null;
  /** Ids (or unique starts of them) of the tasks it waits for. */
  after?: string[];
}

/** Which tasks a listing shows: by state, and whose. */
export interface TaskQuery {
  /** These states (null: every state). */
  states: TaskState[] | null;
  /** Only those addressed to this asker (or its repo, or everyone) or held by it. */
  mine?: string | null;
  /** Only those this asker made. */
  createdBy?: string | null;
  /** Only those addressed within this repo (a name in it, or the repo), or held there. */
  repo?: string | null;
}


/** Whether `name` may take a task addressed to `to`: everyone for `*`, the repo's agents for a repo, the name or its sessions for a name. */
export function mayTake(name: string, to: string): boolean {
  if (to === BROADCAST) return true;
  if (!to.includes('/')) return repoOf(name) === to;
  return name === to || clientAddressOf(name) === to;
}

/** Whether a task addressed to `to` is in `repo`. */
function addressedIn(to: string, repo: string): boolean {
  return to === repo || (to.includes('/') && repoOf(to) === repo);
}

/** A listing's states as asked (a state, or all: null); none asked: the tasks not yet closed or blocked, open and taken. */
export function taskStatesOf(given: string | null | undefined): TaskState[] | null {
  if (given === undefined || given === null || given.trim() === '') return ['open', 'taken'];
  if (given === 'all') return null;
  if (!(TASK_STATES as readonly string[]).includes(given)) throw new InvalidInputError(`state must be one of ${TASK_STATES.join(', ')} or all, not ${quoted(given)}`);
  return [given as TaskState];
}

function oneLine(what: string, text: string, max: number): string {
  const value = text.trim();
  if (value === '') throw new InvalidInputError(`${what} must be non-empty`);
  if (/\p{Cc}/u.test(value)) throw new InvalidInputError(`${what} is one line of text: no line breaks or control characters`);
  if ([...value].length > max) throw new InvalidInputError(`${what} is at most ${max} characters`);
  return value;
}

function taskRow(event: string, ts: string, actor: string, task: TaskRecord): AuditRow {
  return textRow('task', ts, actor, { id: task.taskId, from: task.creator, to: task.addressedTo, threadId: null, body: task.title }, { event, state: task.state, holder: task.holder });
}

/** The mail that offers a task to those who may take it. */
function offerText(task: TaskRecord, note: string | null): string {
  return [
    `[agent-bus task ${shortId(task.taskId)}] ${note === null ? '' : `${note} `}${task.title}`,
    ...(task.body === null ? [] : [task.body]),
    `Take it with take_task (id ${shortId(task.taskId)}), or agent-bus task take ${shortId(task.taskId)}; when it is finished, complete_task with the result, or fail_task with the reason.`,
  ].join('\n');
}

/** The mail that tells a task's creator how it ended. */
function resultText(task: TaskRecord): string {
  const what = task.state === 'done' ? 'result' : 'reason';
  return `[agent-bus task ${shortId(task.taskId)}] ${task.state}: ${task.title}\n${what}: ${task.result ?? '(none given)'}`;
}

/**
 * Look at a task (`look`) until it is closed or `timeoutMs` passes, again whenever the feed says the
 * store may have moved (with a slow poll as the fallback); `first` is the task as already read. The
 * same loop serves a bus on this machine and one reached through a hub. The feed is closed after.
 */
export async function awaitTask(feed: ChangeFeed, look: () => Promise<TaskView>, first: TaskView, timeoutMs: number): Promise<{ task: TaskView; closed: boolean }> {
  let task = first;
  try {
    if (CLOSED_TASK_STATES.includes(task.state)) return { task, closed: true };
    const closed = await eachChange({ feed, pollMs: POLL_MS, deadline: Date.now() + timeoutMs, stopped: () => false }, async (changed) => {
      if (!changed) return undefined;
      task = await look();
      return CLOSED_TASK_STATES.includes(task.state) ? true : undefined;
    });
    return { task, closed: closed === true };
  } finally {
    await feed.close();
  }
}

export class Tasks {
  constructor(
    private readonly store: Store,
    private readonly audit: AuditSink,
    private readonly clock: Clock,
    private readonly mail: Mail,
    private readonly settings: { maxBodyBytes: number },
    /** Names held by running sessions: a task a session took is offered again once its holder is not among them. */
    private readonly liveNames: () => Promise<Set<string>>,
  ) {
    this.reminders = new TaskReminders(store, clock);
  }

  /** The tasks an agent holds, and the stop hook's reminders of them. */
  private readonly reminders: TaskReminders;

  /** Make a task: offered at once, or blocked until the tasks it waits for are done. */
  async create(request: CreateTaskRequest, register: Registration[] = []): Promise<TaskView> {
    const title = oneLine('a task title', request.title, MAX_TITLE_LENGTH);
    const body = request.body?.trim() ? request.body : null;
    if (body !== null && Buffer.byteLength(body, 'utf8') > this.settings.maxBodyBytes) {
      throw new TooLargeError(`the task's body is ${Buffer.byteLength(body, 'utf8')} bytes; the limit is ${this.settings.maxBodyBytes} bytes (AGENT_BUS_MAX_BODY_BYTES). No task was made.`);
    }
    const to = request.to.trim();
    await this.mail.checkAddress(to, 'No task was made');
    if (register.length > 0) await this.store.register(register, stampOf(this.clock));
    const givenAfter = request.after ?? [];
    if (givenAfter.length > MAX_PREREQUISITES) throw new InvalidInputError(`a task waits for ${MAX_PREREQUISITES} others at the most`);
    const after = [...new Set(await Promise.all(givenAfter.map((id) => this.resolve(id))))].map((task) => task.taskId);
    const now = stampOf(this.clock);
    const task: TaskRecord = {
      taskId: timeOrderedId(),
      title,
      body,
      creator: request.creator,
      addressedTo: to,
      state: 'open',
      holder: null,
      sessionBound: false,
      result: null,
      createdAt: now,
      updatedAt: now,
    };
    const made = await this.store.createTask({
      task,
      after,
      decide: (prerequisites) => {
        for (const id of after) {
          const found = prerequisites.find((row) => row.taskId === id);
          if (found === undefined) return { refused: `there is no task ${quoted(id)}: no task was made` };
          if (found.state === 'failed' || found.state === 'cancelled') return { refused: `task ${found.taskId} (${found.title}) is ${found.state}, so this one could never start: no task was made` };
        }
        return prerequisites.every((row) => row.state === 'done') ? task : { ...task, state: 'blocked' };
      },
    });
    if ('refused' in made) throw new TaskRefusedError(made.refused);
    this.audit.append([taskRow('create', now, request.creator, made)]);
    if (made.state === 'open') await this.offer(made, null);
    return taskView(made, after);
  }

  /** Take an open task: the first asker wins, exactly once, and the others are told who has it. */
  async take(id: string, taker: string, sessionBound: boolean): Promise<TaskView> {
    await this.reopenAbandoned();
    const task = await this.resolve(id);
    const now = stampOf(this.clock);
    const after = await this.move(task.taskId, taker, 'take', (current) => {
      if (current.state === 'taken') return { refused: current.holder === taker ? `you hold task ${current.taskId} already` : `task ${current.taskId} was taken by ${current.holder} at ${current.updatedAt}` };
      if (current.state === 'blocked') return { refused: `task ${current.taskId} waits for the tasks it is after; it is offered once they are done` };
      if (current.state !== 'open') return { refused: `task ${current.taskId} is ${current.state}` };
      if (!mayTake(taker, current.addressedTo)) return { refused: `task ${current.taskId} is for ${current.addressedTo}: ${taker} may not take it` };
      return { state: 'taken', holder: taker, sessionBound, result: current.result, updatedAt: now };
    });
    return taskView(after);
  }

  /** Close a task its holder has finished: its creator gets the result. */
  complete(id: string, holder: string, result: string | null): Promise<TaskView> {
    return this.close(id, holder, 'done', result?.trim() ? result : null);
  }

  /** Close a task its holder could not finish: its creator gets the reason, and the tasks waiting for it are cancelled. */
  async fail(id: string, holder: string, reason: string): Promise<TaskView> {
    if (reason.trim() === '') throw new InvalidInputError('say why the task failed: a failed task carries its reason');
    return this.close(id, holder, 'failed', reason);
  }

  private async close(id: string, holder: string, state: 'done' | 'failed', result: string | null): Promise<TaskView> {
    if (result !== null && Buffer.byteLength(result, 'utf8') > this.settings.maxBodyBytes) {
      throw new TooLargeError(`the ${state === 'done' ? 'result' : 'reason'} is ${Buffer.byteLength(result, 'utf8')} bytes; the limit is ${this.settings.maxBodyBytes} bytes (AGENT_BUS_MAX_BODY_BYTES)`);
    }
    const task = await this.resolve(id);
    const now = stampOf(this.clock);
    const after = await this.move(task.taskId, holder, state === 'done' ? 'done' : 'fail', (current) => {
      if (current.state !== 'taken') return { refused: `task ${current.taskId} is ${current.state}: only a taken task is ${state === 'done' ? 'completed' : 'failed'}` };
      if (current.holder !== holder) return { refused: `task ${current.taskId} is held by ${current.holder}, not ${holder}` };
      return { state, holder: current.holder, sessionBound: current.sessionBound, result, updatedAt: now };
    });
    // Urgent: the creator may be mid-turn, waiting on it.
    await this.tell(holder, after.creator, resultText(after), after);
    await this.settleDependents(after);
    return taskView(after);
  }

  /** Cancel a task that is not closed: its creator, or the person, may. Its holder is told, and the tasks waiting for it are cancelled. */
  async cancel(id: string, actor: string, reason: string | null = null): Promise<TaskView> {
    const task = await this.resolve(id);
    const now = stampOf(this.clock);
    const after = await this.move(task.taskId, actor, 'cancel', (current) => {
      if (CLOSED_TASK_STATES.includes(current.state)) return { refused: `task ${current.taskId} is ${current.state} already` };
      if (actor !== current.creator && actor !== HUMAN) return { refused: `task ${current.taskId} was made by ${current.creator}: only its creator, or ${HUMAN}, cancels it` };
      return { state: 'cancelled', holder: current.holder, sessionBound: current.sessionBound, result: reason?.trim() ? reason.trim() : `cancelled by ${actor}`, updatedAt: now };
    });
    if (task.holder !== null && after.holder !== null && after.holder !== actor) await this.tell(actor, after.holder, `[agent-bus task ${shortId(after.taskId)}] cancelled by ${actor}: ${after.title}; stop working on it.`);
    await this.settleDependents(after);
    return taskView(after);
  }

  /**
   * Hand a task that is not closed to someone else (its creator, or the person): it is offered to
   * them, and a holder it is taken from is told to stop.
   */
  async reassign(id: string, to: string, actor: string): Promise<TaskView> {
    const task = await this.resolve(id);
    const target = to.trim();
    await this.mail.checkAddress(target, 'The task was not reassigned');
    const now = stampOf(this.clock);
    const after = await this.move(task.taskId, actor, 'reassign', (current) => {
      if (CLOSED_TASK_STATES.includes(current.state)) return { refused: `task ${current.taskId} is ${current.state}` };
      if (actor !== current.creator && actor !== HUMAN) return { refused: `task ${current.taskId} was made by ${current.creator}: only its creator, or ${HUMAN}, reassigns it` };
      const state = current.state === 'blocked' ? 'blocked' : 'open';
      return { state, addressedTo: target, holder: null, sessionBound: false, result: null, updatedAt: now };
    });
    if (task.holder !== null && task.holder !== actor) await this.tell(actor, task.holder, `[agent-bus task ${shortId(task.taskId)}] reassigned to ${target} by ${actor}: ${task.title}; stop working on it.`);
    if (after.state === 'open') await this.offer(after, `(reassigned by ${actor})`);
    return taskView(after);
  }

  /** One task, with the tasks it waits for. */
  async get(id: string): Promise<TaskView> {
    await this.reopenAbandoned();
    const task = await this.resolve(id);
    return taskView(task, await this.store.prerequisiteIds(task.taskId));
  }

  /** The tasks a listing asks for, oldest first. */
  async list(query: TaskQuery): Promise<TaskView[]> {
    await this.reopenAbandoned();
    const rows = await this.store.tasksIn(query.states, LIST_LIMIT);
    return rows
      .filter((task) => !query.mine || mayTake(query.mine, task.addressedTo) || task.holder === query.mine)
      .filter((task) => !query.createdBy || task.creator === query.createdBy)
      .filter((task) => !query.repo || addressedIn(task.addressedTo, query.repo) || (task.holder !== null && repoOf(task.holder) === query.repo))
      .map((task) => taskView(task));
  }

  /** Until the task is closed or `timeoutMs` passes, looking again whenever the store may have moved. */
  async wait(id: string, timeoutMs: number, feed: ChangeFeed): Promise<{ task: TaskView; closed: boolean }> {
    const first = await this.get(id).catch(async (error: unknown) => {
      await feed.close();
      throw error;
    });
    return awaitTask(feed, () => this.get(first.id), first, timeoutMs);
  }

  /** The tasks an agent holds and has not closed. */
  heldBy(holder: string): Promise<TaskView[]> {
    return this.reminders.heldBy(holder);
  }

  /**
   * The tasks an agent holds, unclosed, that it has not been reminded of: each is returned once
   * (the reminder is counted as it is handed out), so a stop hook that reminds never holds an
   * agent in a loop.
   */
  remindersFor(holder: string): Promise<TaskView[]> {
    return this.reminders.remindersFor(holder);
  }

  /**
   * Offer again every task a session took whose session is gone (ended, or its process not running):
   * the task is open again, offered to those who may take it, and its creator is told.
   */
  async reopenAbandoned(): Promise<TaskView[]> {
    const held = (await this.store.tasksIn(['taken'], LIST_LIMIT)).filter((task) => task.sessionBound);
    if (held.length === 0) return [];
    const live = await this.liveNames();
    const reopened: TaskView[] = [];
    for (const task of held.filter((row) => row.holder !== null && !live.has(row.holder))) {
      const now = stampOf(this.clock);
      const outcome = await this.store.moveTask({
        taskId: task.taskId,
        decide: (current) =>
          current.state === 'taken' && current.holder === task.holder ? { state: 'open', holder: null, sessionBound: false, result: null, updatedAt: now } : { refused: 'moved meanwhile' },
      });
      if (outcome === null || 'refused' in outcome) continue;
      this.audit.append([taskRow('reopen', now, BUS_NAME, outcome.after)]);
      await this.offer(outcome.after, `(offered again: ${task.holder} is gone)`);
      await this.tell(BUS_NAME, outcome.after.creator, `[agent-bus task ${shortId(task.taskId)}] ${task.holder}, who took it, is gone; the task is open again: ${task.title}`);
      reopened.push(taskView(outcome.after));
    }
    return reopened;
  }

  /** A task by its id, or the unique start of it or of its short form. */
  private async resolve(id: string): Promise<TaskRecord> {
    const given = id.trim();
    if (given === '') throw new InvalidInputError('give a task id (or the start of one)');
    const found = longEnoughToLookUp(given) ? await this.store.tasksNamed(idLookup(given), 20) : await this.store.tasksNamed({ prefixes: [given], tail: null }, 1);
    const task = pickNamed(given, 'task', found.map((candidate) => ({ key: candidate.taskId, ids: [candidate.taskId], item: candidate, hint: oneLineHint(candidate.title) })));
    if (task === null) throw new NotFoundError(`there is no task ${quoted(given)}`);
    return task;
  }

  /** One move, refused with its reason or audited as `event`. */
  private async move(taskId: string, actor: string, event: string, decide: (current: TaskRecord, prerequisites: TaskRecord[]) => TaskChange | { refused: string }): Promise<TaskRecord> {
    const outcome = await this.store.moveTask({ taskId, decide });
    if (outcome === null) throw new NotFoundError(`there is no task ${quoted(taskId)}`);
    if ('refused' in outcome) throw new TaskRefusedError(outcome.refused);
    this.audit.append([taskRow(event, outcome.after.updatedAt, actor, outcome.after)]);
    return outcome.after;
  }

  /** A closed task's dependents: offered once all they wait for is done, cancelled when any of it failed or was cancelled. */
  private async settleDependents(closed: TaskRecord): Promise<void> {
    for (const dependent of await this.store.dependentsOf(closed.taskId)) {
      if (dependent.state !== 'blocked') continue;
      const now = stampOf(this.clock);
      const outcome = await this.store.moveTask({
        taskId: dependent.taskId,
        decide: (current, prerequisites) => {
          if (current.state !== 'blocked') return { refused: 'not blocked' };
          const broken = prerequisites.find((row) => row.state === 'failed' || row.state === 'cancelled');
          if (broken) return { state: 'cancelled', holder: null, sessionBound: false, result: `task ${broken.taskId} it waited for is ${broken.state}`, updatedAt: now };
          if (prerequisites.every((row) => row.state === 'done')) return { state: 'open', holder: null, sessionBound: false, result: null, updatedAt: now };
          return { refused: 'still waiting' };
        },
      });
      if (outcome === null || 'refused' in outcome) continue;
      const after = outcome.after;
      this.audit.append([taskRow(after.state === 'open' ? 'unblock' : 'cancel', now, BUS_NAME, after)]);
      if (after.state === 'open') await this.offer(after, null);
      else {
        await this.tell(BUS_NAME, after.creator, `[agent-bus task ${shortId(after.taskId)}] cancelled: ${after.title}; ${after.result}.`, after);
        await this.settleDependents(after);
      }
    }
  }

  /** Offer a task to those who may take it, as mail from its creator (nobody else there: nobody is told). */
  private async offer(task: TaskRecord, note: string | null): Promise<void> {
    await this.mail.send({ from: task.creator, to: task.addressedTo, body: offerText(task, note) }).catch(() => undefined);
  }

  /** Urgent mail about a task (its result, when `result` is the task closed); a creator or holder no longer on the bus is not an error. */
  private async tell(from: string, to: string, body: string, result?: TaskRecord): Promise<void> {
    if (from === to) return;
    const taskResult = result === undefined ? {} : { taskResult: { id: result.taskId, state: result.state } };
    await this.mail.send({ from, to, body, urgent: true, ...taskResult }).catch(() => undefined);
  }
}
