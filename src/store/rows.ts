/** What both engines build the same way from a port's input: the message rows a send plan writes. */
import type { MessageRecord } from '../model/records.js';
import type { SendInput, SendPlan } from './ports.js';

export function plannedMessages(input: SendInput, plan: SendPlan): MessageRecord[] {
  return plan.rows.map((row) => ({
    messageId: row.messageId,
    fromAgent: input.from,
    toAgent: row.toAgent,
    body: input.body,
    threadId: plan.threadId as string,
    sentAt: input.sentAt,
    readAt: null,
    deliveredAt: null,
    addressedTo: input.addressedTo,
    fanoutId: plan.fanoutId,
    toGroup: row.toGroup,
    claimedBy: null,
    deliveredVia: null,
    readVia: null,
  }));
}
