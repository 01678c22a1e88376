/** Tasks: made, looked up, listed, and moved from state to state; the rules of each move are the core's. */
import type { TaskRecord, TaskState } from '../../model/records.js';
import type { AttemptsOf } from './attempts.js';
import type { IdLookup } from '../../model/short-id.js';

/** A new task, with the tasks it waits for (their full ids). */
export interface NewTask {
  task: TaskRecord;
  after: string[];
  /**
   * Pure: given the prerequisites as they stand inside the transaction (one per id, or fewer when
   * one is missing), the task to write, or why none is.
   */
  decide(prerequisites: TaskRecord[]): TaskRecord | { refused: string };
}

/** What a move does to a task: its new state and the fields that go with it. */
export interface TaskChange {
  state: TaskState;
  /** Who may take it now, when the move hands it to someone else (absent: as it was). */
  addressedTo?: string;
  holder: string | null;
  sessionBound: boolean;
  result: string | null;
  updatedAt: string;
}

/** A move asked of one task, decided over it as it stands inside the transaction. */
export interface TaskMove {
  taskId: string;
  /** Pure: the change to write, or why there is none. Runs once, inside the transaction. */
  decide(current: TaskRecord, prerequisites: TaskRecord[]): TaskChange | { refused: string };
}

export type TaskMoveOutcome = { before: TaskRecord; after: TaskRecord } | { refused: string; current: TaskRecord } | null;

export interface TasksPort {
  /** Write a task in one transaction with its prerequisites' check; the task written, or the refusal. */
  createTask(input: NewTask): Promise<TaskRecord | { refused: string }>;
  /** Tasks whose id begins with one of `lookup.prefixes`, or whose short form begins with `lookup.tail`: at most `limit`, by id. */
  tasksNamed(lookup: IdLookup, limit: number): Promise<TaskRecord[]>;
  /** Tasks in these states (all when null), oldest first, at most `limit`. */
  tasksIn(states: TaskState[] | null, limit: number): Promise<TaskRecord[]>;
  /** Move one task in one transaction (null: no such task); concurrent moves of one task are decided one at a time. */
  moveTask(move: TaskMove): Promise<TaskMoveOutcome>;
  /** The tasks that wait for this one. */
  dependentsOf(taskId: string): Promise<TaskRecord[]>;
  /** The ids of the tasks this one waits for. */
  prerequisiteIds(taskId: string): Promise<string[]>;
}

export const TASKS_ATTEMPTS = {
  // Run again, it writes a second task with the same id: refused by the key, never twice.
  createTask: 'once',
  tasksNamed: 'retryable',
  tasksIn: 'retryable',
  // Run again, the move is decided over the task as the first run left it.
  moveTask: 'once',
  dependentsOf: 'retryable',
  prerequisiteIds: 'retryable',
} as const satisfies AttemptsOf<TasksPort>;
