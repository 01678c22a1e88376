/** `agent-bus logs NAME`: a spawned agent's output, its last lines, and with -f every line as it is written until it exits. */
import { followLines } from '../../audit/follow.js';
import { statSync } from 'node:fs';
import { lastLines } from '../../fleet/logs.js';
import { hubAccess } from '../../adapters/hub-access.js';
import { logsOverHub } from '../fleet-remote.js';
import { openBusHere, refuseOverHub } from '../../runtime.js';
import { positiveInt } from '../context.js';
import type { CommandRunner } from '../spec.js';

/** How often a followed log's agent is asked whether it has ended. */
const ENDED_POLL_MS = 500;

export const run: CommandRunner = async (args, io) => {
  const count = positiveInt(args.values.lines, 'lines', 50);
  const access = hubAccess(io.env);
  if (access !== null) return logsOverHub(access, io, args.positionals[0] as string, count, Boolean(args.values.follow));
  refuseOverHub(io.env);
  const bus = openBusHere(io.env);
  try {
    const spawn = await bus.fleet.find(args.positionals[0] as string);
    let size = 0;
    try {
      size = statSync(spawn.logPath).size;
    } catch {
      // Nothing written yet: followed from its start.
    }
    for (const line of lastLines(spawn.logPath, count)) io.stdout.write(`${line}\n`);
    if (!args.values.follow || spawn.state === 'exited') return 0;
    return await new Promise<number>((resolve, reject) => {
      let failed: unknown = null;
      const follower = followLines(
        spawn.logPath,
        (line) => {
          try {
            io.stdout.write(`${line}\n`);
          } catch (error) {
            failed ??= error;
            finish();
          }
        },
        { fromOffset: size, pollMs: ENDED_POLL_MS },
      );
      const timer = setInterval(() => {
        void bus.fleet.byId(spawn.spawnId).then((now) => {
          if (now?.state === 'exited') finish();
        });
      }, ENDED_POLL_MS);
      function finish(): void {
        clearInterval(timer);
        // What it wrote last, before its exit was recorded.
        if (failed === null) follower.flush();
        follower.close();
        process.off('SIGINT', finish);
        if (failed !== null) reject(failed);
        else resolve(0);
      }
      process.once('SIGINT', finish);
    });
  } finally {
    await bus.close();
  }
};
