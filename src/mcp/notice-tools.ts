/** The tools of notices: channel_publish, channel_list and channel_acknowledge. */
import { z } from 'zod';
import { InvalidInputError } from '../model/errors.js';
import type { ToolKit } from './tool-kit.js';

export function noticeTools(kit: ToolKit): void {
  const { bus, session, tool, optionalText } = kit;
  tool(
    'channel_publish',
    {
      description:
        "Publish a notice (broadcast context, not mail) to the sessions subscribed to a channel; an empty channel reaches every session. severity: critical (every turn and before every tool call), alert (every turn) or info (once per session). ttl: seconds or '30m', '4h', '1d'; default by severity.",
      inputSchema: {
        channel: optionalText(),
        message: z.string(),
        severity: optionalText().describe('info, alert or critical'),
        ttl: z.union([z.string(), z.number().int()]).nullish(),
      },
    },
    async ({ channel, message, severity, ttl }) =>
      bus.notices.publish({ channel: channel ?? '', message, severity: severity ?? 'info', ttl: ttl ?? null, source: session.name }, session.name),
  );
  tool(
    'channel_list',
    { description: 'Channels with live notices and their counts by severity (channel null: global notices).', inputSchema: {} },
    async () => {
      const channels = await bus.notices.channels();
      return { channels, total: channels.reduce((sum, row) => sum + row.total, 0) };
    },
  );
  tool(
    'channel_acknowledge',
    {
      description:
        "Stop showing one notice to this session (others still see it). message_id is the id shown with the notice; session_id names the client session when this server cannot tell it.",
      inputSchema: { message_id: z.string().min(1), session_id: optionalText() },
    },
    async ({ message_id, session_id }, callKey) => {
      const given = session_id?.trim() ?? '';
      const key = given !== '' ? given : session.clientSessionKey(callKey);
      if (key === null) {
        throw new InvalidInputError(
          "this server does not know its client's session id (no CLAUDE_CODE_SESSION_ID and no Codex thread id), so it cannot say whose notice to silence; pass session_id",
        );
      }
      const notice = await bus.notices.acknowledge(message_id, key);
      return { ...notice, acknowledged: true, session: key };
    },
  );
}
