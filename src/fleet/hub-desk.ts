/**
 * A supervisor's desk under a runner: each thing it asks of the bus is one call to the hub, about an
 * agent of the runner's own machine (the hub checks that). The hub keeps the records and does what
 * follows an exit (the task failed, the spawner told); the log stays on this machine.
 */
import type { HubAccess } from '../adapters/hub-access.js';
import { callHubOp } from '../remote/calls.js';
import { HubChangeFeed } from '../remote/changes.js';
import type { FleetDesk } from './desk.js';

export function hubDesk(access: HubAccess): FleetDesk {
  return {
    byId: (spawnId) => callHubOp(access, 'runner.spawn', { spawn_id: spawnId }),
    claimSlot: (spawnId, supervisor, max) => callHubOp(access, 'runner.claim', { spawn_id: spawnId, supervisor, max }),
    started: async (spawn, pid) => {
      await callHubOp(access, 'runner.started', { spawn_id: spawn.spawnId, pid });
    },
    exited: (spawnId, exit) =>
      callHubOp(access, 'runner.exited', { spawn_id: spawnId, exit_code: exit.exitCode, exit_signal: exit.exitSignal, exit_category: exit.exitCategory, exit_note: exit.exitNote }),
    hooksSession: (spawn) => callHubOp(access, 'runner.hooks_session', { spawn_id: spawn.spawnId }),
    noteSession: async (spawnId, sessionKey) => {
      await callHubOp(access, 'runner.session', { spawn_id: spawnId, session_key: sessionKey });
    },
    failOpenTask: async (spawn, lines) => {
      await callHubOp(access, 'runner.fail_task', { spawn_id: spawn.spawnId, lines });
    },
    restart: (after, prompt) => callHubOp(access, 'runner.restart', { spawn_id: after.spawnId, prompt }),
    tellSpawner: async (spawn, body) => {
      await callHubOp(access, 'runner.tell', { spawn_id: spawn.spawnId, body });
    },
    changes: () => new HubChangeFeed(access),
  };
}
