/** `agent-bus serve`: the MCP server over stdio for one client session, or with --http the hub. */
import { UsageError } from '../args.js';
import { version } from '../main.js';
import type { CommandRunner } from '../spec.js';
import { quoted } from '../../model/quote.js';
import { openBus, openBusHere } from '../../runtime.js';
import { hubAccess } from '../../adapters/hub-access.js';
import { BusError } from '../../model/errors.js';

export const run: CommandRunner = async (args, io) => {
  const log = (line: string): void => {
    io.stderr.write(`${line}\n`);
  };
  if (!args.values.http) {
    // --host and --port have defaults, so whether they were given is read from the command line.
    const given = io.argv.find((arg) => /^--(host|port)(=|$)/.test(arg));
    if (given !== undefined) throw new UsageError(`serve: ${given.split('=')[0]} is for the hub; add --http`);
    const client = typeof args.values.client === 'string' ? args.values.client : undefined;
    // On a machine set to use a hub, the client's server is a relay to the hub's MCP endpoint.
    const access = hubAccess(io.env);
    if (access !== null) {
      if (access.token === '') throw new BusError(`this machine is set to use the hub at ${access.url}, but no token is set: set AGENT_BUS_TOKEN in the client's environment, or run agent-bus login`);
      const { relayToHub } = await import('../mcp-relay.js');
      const { startSocketWake } = await import('../../wake/socket-wake.js');
      const { hubNudgeDesk } = await import('../../remote/nudge-desk.js');
      // The relay is a child of the client on this machine: it wakes the session through the client's socket, asking the hub.
      const wake = (sessionKey: string | null) => startSocketWake({ desk: hubNudgeDesk(access, sessionKey), env: io.env, client, reader: () => null, log });
      return relayToHub({ access, env: io.env, client, log, wake });
    }
    const { serve } = await import('../../mcp/server.js');
    const { busNudgeDesk, startSocketWake } = await import('../../wake/socket-wake.js');
    return serve({
      env: io.env,
      cwd: io.cwd,
      client,
      version: version(),
      log,
      openBus: () => openBus(io.env),
      wake: (session) => startSocketWake({ ...session, desk: busNudgeDesk(session.bus) }),
    });
  }
  if (typeof args.values.client === 'string') throw new UsageError('serve --http: --client is for the stdio server; a hub speaks for whoever each token names');
  const host = String(args.values.host ?? '127.0.0.1').trim();
  const rawPort = String(args.values.port ?? '8787').trim();
  if (!/^\d+$/.test(rawPort) || Number(rawPort) > 65_535) throw new UsageError(`--port must be a port number from 0 to 65535, got ${quoted(rawPort)}`);
  if (host === '') throw new UsageError('--host must name an address to listen on');
  const { runHub } = await import('../../http/hub/start.js');
  return runHub({ env: io.env, host, port: Number(rawPort), version: version(), log, announce: (line) => io.stdout.write(`${line}\n`), openBus: (how) => openBusHere(io.env, how) });
};
