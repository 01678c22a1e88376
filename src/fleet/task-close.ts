/** A task a spawned agent held and left open when its process ended: failed, with the exit and the log's last lines. */
import type { Bus } from '../core/bus.js';
import { exitText } from '../core/fleet-ops.js';
import type { SpawnRecord } from '../model/records.js';
import { lastLines } from './logs.js';

/** How many of the log's last lines a failed task's reason carries. */
export const REASON_LINES = 10;

/** The last lines of an agent's log a failed task's reason carries: its output, without the bus's own notes. */
export function reasonLines(spawn: SpawnRecord): string[] {
  return lastLines(spawn.logPath, REASON_LINES + 5)
    .filter((line) => !line.startsWith('[agent-bus] '))
    .slice(-REASON_LINES);
}

/**
 * The task the agent held, failed with the exit's reason when its process ended and left it open.
 * The lines are its log's last (read here, where the log is, unless given by the machine it ran on).
 */
export async function failOpenTask(bus: Pick<Bus, 'tasks'>, spawn: SpawnRecord, lines: string[] = reasonLines(spawn)): Promise<void> {
  if (spawn.taskId === null) return;
  const task = await bus.tasks.get(spawn.taskId).catch(() => null);
  if (task === null || task.state !== 'taken' || task.holder !== spawn.name) return;
  const shown = lines.slice(-REASON_LINES);
  const reason =
    `${spawn.name} ended (${exitText(spawn)}${spawn.exitNote === null ? '' : `: ${spawn.exitNote}`}) without closing the task.` +
    (shown.length > 0 ? `\nThe last lines of its log:\n${shown.join('\n')}` : '\nIts log is empty.');
  await bus.tasks.fail(spawn.taskId, spawn.name, reason);
}
