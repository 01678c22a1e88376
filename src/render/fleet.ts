/** The agents the bus started, as `agents` lists them under the roster: one line each, its latest spawn. */
import type { SpawnView } from '../core/fleet-ops.js';
import { durationText } from '../model/duration.js';
import { stampToMillis } from '../model/clock.js';
import { pad, padStyled, printable, shortIdText } from './format.js';
import type { Style } from './style.js';

/** How it stands: queued, running (with how long, and its turn where its hooks say), or how it ended. */
function standing(spawn: SpawnView, presence: string | null, now: number): string {
  if (spawn.state === 'queued') return spawn.supervisor_gone === true ? 'queued, supervisor gone' : 'queued';
  // Its runner is away: it may run still, or have ended; the runner says when it is back.
  if (spawn.state === 'unknown') return 'unknown, runner away';
  if (spawn.state === 'running') {
    const since = spawn.started_at === null ? '' : ` ${durationText(now - stampToMillis(spawn.started_at))}`;
    const note = spawn.supervisor_gone === true ? ', supervisor gone' : spawn.stop_requested_at === null ? '' : ', stopping';
    return `${presence !== null && presence !== 'unknown' ? presence : 'running'}${since}${note}`;
  }
  const how = spawn.exit_signal ?? (spawn.exit_code === null ? '' : `exit ${spawn.exit_code}`);
  const ran = spawn.started_at !== null && spawn.ended_at !== null ? ` after ${durationText(stampToMillis(spawn.ended_at) - stampToMillis(spawn.started_at))}` : '';
  return `${spawn.exit_category ?? 'ended'}${how === '' ? '' : ` (${how})`}${ran}`;
}

export function renderFleet(spawns: readonly SpawnView[], presenceOf: (name: string) => string | null, style: Style, now = Date.now()): string {
  if (spawns.length === 0) return '';
  const width = Math.max(20, ...spawns.map((spawn) => printable(spawn.name).length + 2));
  const lines = ['', 'spawned by the bus:'];
  for (const spawn of spawns) {
    const parts = [
      pad(spawn.client, 9),
      pad(standing(spawn, presenceOf(spawn.name), now), 28),
      spawn.pid === null ? '' : `pid ${spawn.pid}`,
      `on ${printable(spawn.machine)}`,
      ...(spawn.task === null ? [] : [`task ${shortIdText(spawn.task)}`]),
      ...(spawn.tmux ? [spawn.tmux.window === null || spawn.state === 'exited' ? 'tmux' : `tmux ${spawn.tmux.window}`] : []),
      ...(spawn.yolo ? ['yolo'] : []),
      ...(spawn.restart === null ? [] : [`restarts ${spawn.restarts}/${spawn.max_restarts}`]),
    ].filter((part) => part !== '');
    lines.push(`  ${padStyled(style.agent(spawn.name), spawn.name, width)}${parts.join('  ')}`);
  }
  return `${lines.join('\n')}\n`;
}
