/**
 * The fleet in words, for the fleet view and for Activity's `spawn` rows: how a spawned agent
 * ended (`exit 3 (failed)`, `SIGTERM (stopped)`, as `agent-bus agents` says it), and what each
 * row of its life (request, start, stop, exit, resume, restart) says happened.
 */
import type { Child } from './dom.js';
import { shortId } from './ids.js';
import type { AuditRow } from './types.js';

/** An exit as a person reads it, as core/fleet-ops.ts's exitText says it (that module is the server's, not the page's). */
export function exitWords(exit: { code: number | null; signal: string | null; category: string | null }): string {
  const how = exit.signal !== null ? exit.signal : exit.code !== null ? `exit ${exit.code}` : 'no exit code';
  return `${how} (${exit.category ?? 'unknown'})`;
}

function field(row: AuditRow, key: string): string {
  const value = row[key];
  return typeof value === 'string' ? value : typeof value === 'number' ? String(value) : '';
}

/** A spawn row in words: who did it, what happened, and the prompt it carried (its preview without the event's prefix). */
export function spawnWords(row: AuditRow): { who: string; what: Child[]; prompt: string | null } | null {
  if (row.op !== 'spawn') return null;
  const event = field(row, 'event');
  const agent = row.to;
  const preview = row.body_preview ?? '';
  const prompt = preview.startsWith(`${event}: `) ? preview.slice(event.length + 2) : preview;
  const task = field(row, 'task_id');
  switch (event) {
    case 'request': {
      const how = [field(row, 'client'), row.yolo === true ? 'with --yolo' : '', field(row, 'machine') ? `on ${field(row, 'machine')}` : '', task ? `for task ${shortId(task)}` : ''].filter(Boolean).join(' ');
      return { who: row.actor, what: [`spawned ${agent}${how ? ` (${how})` : ''}`], prompt };
    }
    case 'start':
      return { who: agent, what: [`started${field(row, 'pid') ? ` as pid ${field(row, 'pid')}` : ''}${field(row, 'machine') ? ` on ${field(row, 'machine')}` : ''}`], prompt: null };
    case 'exit': {
      const code = typeof row.exit_code === 'number' ? row.exit_code : null;
      const signal = typeof row.exit_signal === 'string' ? row.exit_signal : null;
      return { who: agent, what: [`exited: ${exitWords({ code, signal, category: field(row, 'category') || null })}`], prompt: null };
    }
    case 'stop':
      return { who: row.actor, what: [`stopped ${agent}`], prompt: null };
    case 'resume':
      return { who: row.actor, what: [`resumed ${agent}${field(row, 'session') ? ` on its session ${field(row, 'session')}` : ''}`], prompt };
    case 'restart':
      return { who: agent, what: [`was started again after a crash (restart ${field(row, 'restarts') || '?'})`], prompt: null };
    default:
      return { who: row.actor, what: [`${event || 'spawn'} ${agent}`], prompt: null };
  }
}
