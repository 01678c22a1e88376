/**
 * The tasks an agent holds, and the stop hook's reminder of them: all of the tasks a hook needs,
 * apart from the rest of the tasks' service (core/task-ops.ts), which no hook loads.
 */
import { stampOf, type Clock } from '../model/clock.js';
import type { TaskRecord, TaskState } from '../model/records.js';
import type { SessionsPort } from '../store/ports/sessions.js';
import type { TasksPort } from '../store/ports/tasks.js';

/** The most tasks a listing reads. */
export const LIST_LIMIT = 1_000;

/** A task as tools and commands show it. */
export interface TaskView {
  id: string;
  title: string;
  body: string | null;
  creator: string;
  to: string;
  state: TaskState;
  holder: string | null;
  result: string | null;
  created_at: string;
  updated_at: string;
  /** The tasks it waits for (when asked for one task). */
  after?: string[];
}

export function taskView(task: TaskRecord, after?: string[]): TaskView {
  return {
    id: task.taskId,
    title: task.title,
    body: task.body,
    creator: task.creator,
    to: task.addressedTo,
    state: task.state,
    holder: task.holder,
    result: task.result,
    created_at: task.createdAt,
    updated_at: task.updatedAt,
    ...(after === undefined ? {} : { after }),
  };
}

export class TaskReminders {
  constructor(
    private readonly store: Pick<TasksPort, 'tasksIn'> & Pick<SessionsPort, 'tick'>,
    private readonly clock: Clock,
  ) {}

  /** The tasks `holder` has taken and not closed. */
  async heldBy(holder: string): Promise<TaskView[]> {
    return (await this.store.tasksIn(['taken'], LIST_LIMIT)).filter((task) => task.holder === holder).map((task) => taskView(task));
  }

  /**
   * The tasks an agent holds, unclosed, that it has not been reminded of: each is returned once
   * (the reminder is counted as it is handed out), so a stop hook that reminds never holds an
   * agent in a loop.
   */
  async remindersFor(holder: string): Promise<TaskView[]> {
    const held = await this.heldBy(holder);
    const due: TaskView[] = [];
    for (const task of held) if ((await this.store.tick(holder, `task-reminded:${task.id}`, stampOf(this.clock))) === 1) due.push(task);
    return due;
  }
}
