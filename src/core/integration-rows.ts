/** The audit row of what an integration did or had done to it: it names the integration, never a secret. */
import { textRow, type AuditRow } from '../audit/record.js';

export function integrationRow(ts: string, actor: string, event: string, name: string, text: string, extra: Record<string, unknown> = {}): AuditRow {
  return { ...textRow('integration', ts, actor, { id: '', from: name, to: name, threadId: null, body: text }, { event, integration: name, ...extra }), message_id: null };
}
