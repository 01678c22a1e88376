/**
 * `agent-bus wait NAME --until STATE`: until the named agent's session reaches a state (working,
 * idle, waiting, ended or gone), looking again whenever the bus may have moved; here or over a hub.
 */
import { openClient } from '../../connect.js';
import { eachChange } from '../../core/store-changes.js';
import { AWAITED_STATES, type AwaitedState } from '../../core/presence-ops.js';
import type { AgentView } from '../../core/views.js';
import { parseDuration } from '../../model/duration.js';
import { NotFoundError } from '../../model/errors.js';
import { quoted } from '../../model/quote.js';
import { heldText } from '../../model/when.js';
import { UsageError } from '../args.js';
import type { CommandRunner } from '../spec.js';

const WAIT_TIMED_OUT = 4;
/** The fallback look when no hint comes: a state may move with nothing written (a process that dies). */
const POLL_MS = 1_000;

export const run: CommandRunner = async (args, io) => {
  const [name, ...extra] = args.positionals;
  if (name === undefined || name.trim() === '' || extra.length > 0) throw new UsageError("wait: give one agent's name. See 'agent-bus wait --help'.");
  const until = args.values.until;
  if (typeof until !== 'string' || !(AWAITED_STATES as readonly string[]).includes(until)) throw new UsageError(`wait: --until takes ${AWAITED_STATES.join(', ')}. See 'agent-bus wait --help'.`);
  const wanted = until as AwaitedState;
  const timeoutText = typeof args.values.timeout === 'string' ? args.values.timeout : '10m';
  const timeoutMs = parseDuration(timeoutText, { what: '--timeout' });
  const client = openClient(io.env, { cwd: io.cwd, as: null });
  const feed = client.changes();
  try {
    let seen: AgentView | null = null;
    const look = async (): Promise<AgentView> => {
      const found = (await client.agents()).find((agent) => agent.name === name);
      if (found !== undefined) return (seen = found);
      // A session address leaves the roster when its server closes: it ended.
      if (seen !== null) return { ...seen, state: 'ended', state_since: null, live: false };
      throw new NotFoundError(`no agent named ${quoted(name)} is on the bus; list the agents to see who is there`);
    };
    let agent = await look();
    const reached = await eachChange({ feed, pollMs: POLL_MS, deadline: Date.now() + timeoutMs, stopped: () => false }, async () => {
      agent = await look();
      return agent.state === wanted ? true : undefined;
    });
    const said = `${agent.name} is ${agent.state}${agent.state_since === null ? '' : ` (${heldText(agent.state_since)})`}`;
    if (args.values.json) io.stdout.write(`${JSON.stringify({ name: agent.name, state: agent.state, state_since: agent.state_since, reached: reached === true })}\n`);
    if (reached !== true) {
      io.stderr.write(`agent-bus: ${said}, not ${wanted}, after ${timeoutText}\n`);
      return WAIT_TIMED_OUT;
    }
    if (!args.values.json) io.stdout.write(`${said}\n`);
    return 0;
  } finally {
    await feed.close();
    await client.close();
  }
};
