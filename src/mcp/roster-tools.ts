/** The tools of who is on the bus: whoami, list_agents and set_session. */
import { z } from 'zod';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { composeWhoami } from '../core/roster-ops.js';
import type { AgentView } from '../core/views.js';
import { clientAddressOf } from '../core/names.js';
import { isStoreUnavailable } from '../model/errors.js';
import type { Whoami } from '../protocol/hub.js';
import { toolError, toolResult, type Extra } from './tool-kit.js';
import type { ToolKit } from './tool-kit.js';

export function rosterTools(kit: ToolKit): void {
  const { bus, session, tool, optionalText, server, prepare } = kit;
  server.registerTool(
    'whoami',
    { description: 'Who this session is on the bus: its name, repo, session address, topic and repo-mates.', inputSchema: {} },
    async (_args: Record<string, never>, extra: Extra): Promise<CallToolResult> => {
      // Who this is never depends on the store: with the store unreachable, whoami still answers and says why.
      try {
        await prepare(extra);
      } catch (error) {
        if (!isStoreUnavailable(error)) return toolError(error);
        session.noteStoreProblem((error as Error).message);
      }
      let rows: AgentView[] = [];
      try {
        rows = await bus.roster.agents();
        session.noteStoreProblem(null);
      } catch (error) {
        if (!isStoreUnavailable(error)) return toolError(error);
        session.noteStoreProblem((error as Error).message);
      }
      const { group_members, ...who } = composeWhoami(session.name, rows);
      const whoami: Whoami = { ...who, mcp_client: server.server.getClientVersion()?.name ?? null, group_members, warnings: session.warnings };
      return toolResult(whoami);
    },
  );
  tool(
    'list_agents',
    {
      description:
        'Everyone on the bus with unread counts; pass a bare repo name as group to see one repo. Sessions show whether they are running (live), and each name where its turn stands (state: working, idle, waiting, ended, gone, unknown; state_since) and the task it holds.',
      inputSchema: { group: optionalText() },
    },
    async ({ group }) => bus.roster.agents(group === null || group === '' ? undefined : group),
  );
  tool(
    'notify_when',
    {
      description:
        "Be told by mail, once, when an agent reaches a state (working, idle, waiting, ended or gone): say, when another agent goes idle, instead of asking again and again. The mail wakes you if you are idle; if it is in that state already, it comes at once.",
      inputSchema: { name: z.string().min(1), state: z.string().min(1) },
    },
    async ({ name, state }) => bus.presence.notifyWhen(session.name, name, state),
  );
  tool(
    'set_session',
    {
      description: "Name this session after its work (label → '<repo>/<client>-<label>'; its unread mail moves with it) and/or set the topic shown in list_agents (an empty topic clears it).",
      inputSchema: { label: optionalText(), topic: optionalText() },
    },
    async ({ label, topic }) => {
      if (label !== undefined && label !== null) await session.rename(label);
      let current = (await bus.roster.get(session.name))?.topic ?? null;
      if (topic !== undefined && topic !== null) current = await bus.roster.setTopic(session.name, topic);
      return { name: session.name, client_address: clientAddressOf(session.name), topic: current };
    },
  );
}
