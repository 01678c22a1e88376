/** A task a spawned agent held and left open when its process ended: failed, with the exit and the log's last lines. */
import type { Bus } from '../core/bus.js';
import { exitText } from '../core/fleet-ops.js';
import type { SpawnRecord } from '../model/records.js';
import { lastLines } from './logs.js';

/** How many of the log's last lines a failed task's reason carries. */
const REASON_LINES = 10;

/** The task the agent held, failed with the exit's reason when its process ended and left it open. */
export async function failOpenTask(bus: Bus, spawn: SpawnRecord): Promise<void> {
  if (spawn.taskId === null) return;
  const task = await bus.tasks.get(spawn.taskId).catch(() => null);
  if (task === null || task.state !== 'taken' || task.holder !== spawn.name) return;
  const lines = lastLines(spawn.logPath, REASON_LINES).filter((line) => !line.startsWith('[agent-bus] '));
  const reason =
    `${spawn.name} ended (${exitText(spawn)}${spawn.exitNote === null ? '' : `: ${spawn.exitNote}`}) without closing the task.` +
    (lines.length > 0 ? `\nThe last lines of its log:\n${lines.join('\n')}` : '\nIts log is empty.');
  await bus.tasks.fail(spawn.taskId, spawn.name, reason);
}

