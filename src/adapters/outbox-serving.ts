/** This process serving the outbox of integrations out, while it runs: the hub, or on one machine an MCP server, the chat or the dashboard. */
import type { Bus } from '../core/bus.js';
import { setting, type Env } from '../model/settings.js';
import { workerGone, workerName } from './procs.js';

export function serveOutbox(bus: Bus, env: Env, report: (line: string) => void = () => undefined): { stop: () => Promise<void> } {
  return bus.outbound.serve({
    holder: workerName(),
    changes: () => bus.changes(),
    // Where file-system events run out, the loop still looks this often.
    pollMs: setting(env, 'AGENT_BUS_WATCH_POLL_SECONDS') * 1000,
    holderGone: workerGone,
    report,
  });
}
