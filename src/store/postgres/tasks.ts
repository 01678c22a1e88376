/** Tasks on PostgreSQL: a move locks its task's row, and a new task its prerequisites', so racing takers are decided one at a time. */
import { firstDistinct, idRanges } from '../shared/ranges.js';
import type { TasksPort } from '../ports/tasks.js';
import { columnList, selectList, TASK_FIELDS, taskOf, taskValues, valuesList } from '../shared/columns.js';
import type { PostgresPool } from './pool.js';

const COLUMNS = selectList(TASK_FIELDS);
const JOINED = selectList(TASK_FIELDS, 't');
const FIELDS = Object.keys(TASK_FIELDS);
type Row = Parameters<typeof taskOf>[0];

export function postgresTasks(pool: PostgresPool): TasksPort {
  return {
    async createTask({ task, after, decide }) {
      return pool.transaction([], async (query) => {
        // Locked, so a prerequisite's move waits for this task (and then finds it among its dependents), or this waits for it.
        const found = ((await query(`SELECT ${COLUMNS} FROM tasks WHERE task_id = ANY($1::text[]) ORDER BY task_id FOR UPDATE`, [after])).rows as Row[]).map(taskOf);
        const decided = decide(found);
        if ('refused' in decided) return decided;
        const values = taskValues(decided);
        await query(
          `INSERT INTO tasks (${columnList(TASK_FIELDS)}) VALUES (${valuesList(TASK_FIELDS, (_, index) => `$${index + 1}`)})`,
          FIELDS.map((field) => values[field]),
        );
        if (after.length > 0) {
          await query('INSERT INTO task_prerequisites (task_id, prerequisite_id) SELECT $1, unnest($2::text[]) ON CONFLICT DO NOTHING', [task.taskId, after]);
        }
        return decided;
      });
    },

    async tasksNamed(lookup, limit) {
      // Ranges on the key and on the short form's index.
      const rows = new Map<string, Row>();
      for (const { expression, from, to } of idRanges(lookup, 'task_id', true)) {
        for (const row of await pool.read<Row>(`SELECT ${COLUMNS} FROM tasks WHERE ${expression} >= $1 AND ${expression} < $2 ORDER BY task_id LIMIT $3`, [from, to, limit])) {
          rows.set(row.taskId, row);
        }
      }
      return firstDistinct(rows.keys(), limit).map((id) => taskOf(rows.get(id) as Row));
    },

    async tasksIn(states, limit) {
      return (
        await pool.read<Row>(`SELECT ${COLUMNS} FROM tasks WHERE ($1::text[] IS NULL OR state = ANY($1::text[])) ORDER BY created_at, task_id LIMIT $2`, [states, limit])
      ).map(taskOf);
    },

    async moveTask({ taskId, decide }) {
      return pool.transaction([], async (query) => {
        const row = (await query(`SELECT ${COLUMNS} FROM tasks WHERE task_id = $1 FOR UPDATE`, [taskId])).rows[0] as Row | undefined;
        if (row === undefined) return null;
        const current = taskOf(row);
        const prerequisites = ((await query(`SELECT ${JOINED} FROM task_prerequisites p JOIN tasks t ON t.task_id = p.prerequisite_id WHERE p.task_id = $1 ORDER BY t.created_at, t.task_id`, [taskId])).rows as Row[]).map(taskOf);
        const change = decide(current, prerequisites);
        if ('refused' in change) return { refused: change.refused, current };
        await query('UPDATE tasks SET state = $2, holder = $3, session_bound = $4, result = $5, updated_at = $6, addressed_to = COALESCE($7, addressed_to) WHERE task_id = $1', [
          taskId,
          change.state,
          change.holder,
          change.sessionBound ? 1 : 0,
          change.result,
          change.updatedAt,
          change.addressedTo ?? null,
        ]);
        return { before: current, after: { ...current, ...change } };
      });
    },

    async dependentsOf(taskId) {
      return (await pool.read<Row>(`SELECT ${JOINED} FROM task_prerequisites p JOIN tasks t ON t.task_id = p.task_id WHERE p.prerequisite_id = $1 ORDER BY t.created_at, t.task_id`, [taskId])).map(taskOf);
    },

    async prerequisiteIds(taskId) {
      return (await pool.read<{ id: string }>('SELECT prerequisite_id AS id FROM task_prerequisites WHERE task_id = $1 ORDER BY prerequisite_id', [taskId])).map((row) => row.id);
    },
  };
}
