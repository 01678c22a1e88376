/** `agent-bus stop NAME`: end a spawned agent, a polite signal first and a kill after the grace period; its exit is recorded either way. */
import { speakerName } from '../../client/speaker.js';
import { exitText, spawnView } from '../../core/fleet-ops.js';
import { stopAgent } from '../../fleet/stop.js';
import { isFleetWorktree, removeWorktree } from '../../fleet/worktree.js';
import { busPaths } from '../../adapters/paths.js';
import { profileFor } from '../../clients/registry/profiles.js';
import { stampToMillis } from '../../model/clock.js';
import { hubAccess } from '../../adapters/hub-access.js';
import { UsageError } from '../args.js';
import { stopOverHub } from '../fleet-remote.js';
import { openBusHere, refuseOverHub } from '../../runtime.js';
import type { CommandRunner } from '../spec.js';

export const run: CommandRunner = async (args, io) => {
  const access = hubAccess(io.env);
  if (access !== null) {
    if (args.values.clean) throw new UsageError("stop: --clean removes a worktree of this machine's bus: through a hub, stop without it");
    return stopOverHub(access, io.env, io, args.positionals[0] as string, Boolean(args.values.json));
  }
  refuseOverHub(io.env);
  const bus = openBusHere(io.env);
  try {
    const busFolder = busPaths(io.env).folder;
    const found = await bus.fleet.find(args.positionals[0] as string);
    // --clean of an agent that has ended already cleans only.
    const stopped = found.state === 'exited' && args.values.clean ? found : await stopAgent(bus, io.env, found.spawnId, speakerName(undefined, io.env));
    const took = stopped.stopRequestedAt !== null && stopped.endedAt !== null ? (stampToMillis(stopped.endedAt) - stampToMillis(stopped.stopRequestedAt)) / 1000 : 0;
    const lines = found.state === 'exited' ? [] : [`stopped ${stopped.name}: ${exitText(stopped)} after ${Math.max(0, took).toFixed(1)}s`];
    let worktree: { folder: string; removed: boolean; left: string | null } | null = null;
    if (args.values.clean) {
      if (!isFleetWorktree(busFolder, stopped.folder)) lines.push(`${stopped.name} has no worktree of its own: nothing to clean`);
      else {
        const outcome = removeWorktree(stopped.folder, profileFor(stopped.client).configFiles);
        worktree = { folder: stopped.folder, removed: outcome.removed, left: outcome.removed ? null : outcome.left };
        lines.push(outcome.removed ? `removed its worktree ${stopped.folder} (its branch agent/${stopped.label} stays)` : `kept its worktree ${stopped.folder}: ${outcome.left}`);
      }
    }
    if (args.values.json) io.stdout.write(`${JSON.stringify({ ...spawnView(stopped), worktree })}\n`);
    else io.stdout.write(`${lines.join('\n')}\n`);
    return 0;
  } finally {
    await bus.close();
  }
};
