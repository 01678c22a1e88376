/** `agent-bus serve`: the MCP server over stdio for one client session. */
import { serve } from '../../mcp/server.js';
import { version } from '../main.js';
import type { CommandRunner } from '../spec.js';

export const run: CommandRunner = async (args, io) =>
  serve({
    env: io.env,
    cwd: io.cwd,
    client: typeof args.values.client === 'string' ? args.values.client : undefined,
    version: version(),
    log: (line) => io.stderr.write(`${line}\n`),
  });
