/** A task a spawned agent held and left open when its process ended: failed, with the exit and the log's last lines. */
import type { Bus } from '../core/bus.js';
import { exitText } from '../core/fleet-ops.js';
import type { SpawnRecord } from '../model/records.js';
import { lastLines } from './logs.js';

/** How many of the log's last lines a failed task's reason carries. */
export const REASON_LINES = 10;

// eslint-disable-next-line no-control-regex
const TERMINAL_CODES = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[@-_]|[\u0000-\u0008\u000b-\u001f\u007f]/g;

/** A line of a terminal's output (an agent in tmux) as it reads: its escape codes dropped, and what a carriage return wrote over. */
function plainLine(line: string): string {
  const segments = line.split('\r').filter((segment) => segment !== '');
  return (segments.at(-1) ?? '').replace(TERMINAL_CODES, '');
}

/** The last lines of an agent's log a failed task's reason carries: its output, without the bus's own notes. */
export function reasonLines(spawn: SpawnRecord): string[] {
  return lastLines(spawn.logPath, REASON_LINES + 5)
    .filter((line) => !line.startsWith('[agent-bus] '))
    .map((line) => (spawn.tmux ? plainLine(line) : line))
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
