/** `agent-bus web`: the dashboard over the local bus, in the browser. */
import { UsageError } from '../args.js';
import { speakerName, speakerRegistrations } from '../context.js';
import { version } from '../main.js';
import type { CommandRunner } from '../spec.js';
import { openClient } from '../../connect.js';
import { openBusHere } from '../../runtime.js';
import { quoted } from '../../model/quote.js';
import { localFleet } from '../dashboard-fleet.js';

export const run: CommandRunner = async (args, io) => {
  const host = String(args.values.host ?? '127.0.0.1').trim();
  const rawPort = String(args.values.port ?? '8788').trim();
  if (!/^\d+$/.test(rawPort) || Number(rawPort) > 65_535) throw new UsageError(`--port must be a port number from 0 to 65535, got ${quoted(rawPort)}`);
  if (host === '') throw new UsageError('--host must name an address to listen on');
  // The dashboard serves this machine's store; a hub serves its own.
  const where = openClient(io.env, { cwd: io.cwd, as: null }).location;
  if (where.kind === 'hub') throw new UsageError(`this machine uses the hub at ${where.url}: its dashboard is at ${where.url}/ (sign in with your token)`);
  const name = speakerName(undefined, io.env);
  const actor = { name, registrations: speakerRegistrations(name, io.env, io.cwd), mayClearNotices: true, mayReleaseReservations: true };
  const { runWebServer } = await import('../../http/dashboard/web-server.js');
  return runWebServer({
    env: io.env,
    host,
    port: Number(rawPort),
    version: version(),
    actor,
    open: !args.values['no-open'],
    openBus: () => openBusHere(io.env),
    // The dashboard's bus is this machine's: it spawns and stops agents here, as `agent-bus spawn` and `stop` do.
    fleet: (bus) => localFleet(bus, io.env),
    log: (line) => io.stderr.write(`${line}\n`),
    announce: (line) => io.stdout.write(`${line}\n`),
  });
};
