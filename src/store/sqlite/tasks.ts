/** Tasks on SQLite: each creation and move is one BEGIN IMMEDIATE, so racing takers are decided one at a time. */
import { lazy } from '../shared/lazy.js';
import type { TaskRecord } from '../../model/records.js';
import { firstDistinct, idRanges } from '../shared/ranges.js';
import type { TasksPort } from '../ports/tasks.js';
import { columnList, selectList, TASK_FIELDS, taskOf, taskValues, valuesList } from '../shared/columns.js';
import type { SqliteConnection } from './driver.js';

const COLUMNS = lazy(() => selectList(TASK_FIELDS));
type Row = Parameters<typeof taskOf>[0];

export function sqliteTasks(db: SqliteConnection): TasksPort {
  const byId = (id: string): TaskRecord | undefined => {
    const row = db.get<Row>(`SELECT ${COLUMNS()} FROM tasks WHERE task_id = ?`, [id]);
    return row === undefined ? undefined : taskOf(row);
  };
  const prerequisites = (id: string): TaskRecord[] =>
    db
      .all<Row>(`SELECT ${selectList(TASK_FIELDS, 't')} FROM task_prerequisites p JOIN tasks t ON t.task_id = p.prerequisite_id WHERE p.task_id = ? ORDER BY t.created_at, t.task_id`, [id])
      .map(taskOf);

  return {
    async createTask({ task, after, decide }) {
      return db.immediate(() => {
        const found = after.map((id) => byId(id)).filter((row): row is TaskRecord => row !== undefined);
        const decided = decide(found);
        if ('refused' in decided) return decided;
        db.run(`INSERT INTO tasks (${columnList(TASK_FIELDS)}) VALUES (${valuesList(TASK_FIELDS, (field) => `@${field}`)})`, taskValues(decided));
        for (const id of after) db.run('INSERT OR IGNORE INTO task_prerequisites (task_id, prerequisite_id) VALUES (?, ?)', [task.taskId, id]);
        return decided;
      });
    },

    async tasksNamed(lookup, limit) {
      // Ranges on the key and on the short form's index: the prefix's rows, and no LIKE to escape.
      const rows = new Map<string, Row>();
      for (const { expression, from, to } of idRanges(lookup, 'task_id', true)) {
        for (const row of db.all<Row>(`SELECT ${COLUMNS()} FROM tasks WHERE ${expression} >= @from AND ${expression} < @to ORDER BY task_id LIMIT @limit`, { from, to, limit })) {
          rows.set(row.taskId, row);
        }
      }
      return firstDistinct(rows.keys(), limit).map((id) => taskOf(rows.get(id) as Row));
    },

    async tasksIn(states, limit) {
      if (states === null) return db.all<Row>(`SELECT ${COLUMNS()} FROM tasks ORDER BY created_at, task_id LIMIT ?`, [limit]).map(taskOf);
      return db
        .all<Row>(`SELECT ${COLUMNS()} FROM tasks WHERE state IN (SELECT value FROM json_each(@states)) ORDER BY created_at, task_id LIMIT @limit`, { states: JSON.stringify(states), limit })
        .map(taskOf);
    },

    async moveTask({ taskId, decide }) {
      return db.immediate(() => {
        const current = byId(taskId);
        if (current === undefined) return null;
        const change = decide(current, prerequisites(taskId));
        if ('refused' in change) return { refused: change.refused, current };
        db.run(
          'UPDATE tasks SET state = @state, addressed_to = COALESCE(@addressedTo, addressed_to), holder = @holder, session_bound = @sessionBound, result = @result, updated_at = @updatedAt WHERE task_id = @taskId',
          { ...change, addressedTo: change.addressedTo ?? null, sessionBound: change.sessionBound ? 1 : 0, taskId },
        );
        return { before: current, after: { ...current, ...change } };
      });
    },

    async dependentsOf(taskId) {
      return db
        .all<Row>(`SELECT ${selectList(TASK_FIELDS, 't')} FROM task_prerequisites p JOIN tasks t ON t.task_id = p.task_id WHERE p.prerequisite_id = ? ORDER BY t.created_at, t.task_id`, [taskId])
        .map(taskOf);
    },

    async prerequisiteIds(taskId) {
      return db.all<{ id: string }>('SELECT prerequisite_id AS id FROM task_prerequisites WHERE task_id = ? ORDER BY prerequisite_id', [taskId]).map((row) => row.id);
    },
  };
}
