/** The tools of mail: send_message, read_inbox, read_thread, message_status, search_messages and tail_audit. */
import { z } from 'zod';
import type { ToolKit } from './tool-kit.js';

export function mailTools(kit: ToolKit): void {
  const { bus, session, tool, optionalText, limitArg, limitOf } = kit;
  tool(
    'send_message',
    {
      description:
        "Send mail. to: 'repo/client-N' or 'repo/client-label' (one session), 'repo/client' (any session of that client), 'repo' (every client in the repo; one claims it), or '*' (everyone). Reply with the thread_id you received. urgent: true shows it at the recipient's next tool call, mid-turn (for what cannot wait for its turn to end); other mail waits for the turn boundary.",
      // Empty strings reach the bus, whose errors say what to do ("use '*' to broadcast").
      inputSchema: { to: z.string(), body: z.string(), thread_id: optionalText(), urgent: z.boolean().nullish() },
    },
    async ({ to, body, thread_id, urgent }) =>
      bus.mail.sendFromSession({ from: session.name, holdsSession: session.holdsSession, to, body, threadId: thread_id ?? null, urgent: urgent ?? false }),
  );
  tool(
    'read_inbox',
    {
      description: "Unread mail for this session (its own, plus mail to its client address no other session took), oldest first. mark_read=false only peeks.",
      inputSchema: { mark_read: z.boolean().nullish(), limit: limitArg() },
    },
    async ({ mark_read, limit }) => {
      const markRead = mark_read ?? true;
      // A model's peek puts the mail in its context (delivered); a person's peek through the remote inbox records nothing, as on this machine.
      const via = markRead || session.readWay === 'read_inbox' ? session.readWay : null;
      return bus.inbox.read({ reader: session.name, markRead, limit: limitOf(limit, 50), via, deliver: session.readWay === 'chat' });
    },
  );
  tool(
    'read_thread',
    { description: "A whole conversation across participants, in the order it was sent. thread_id: the thread's id (whole, its short form, or the start of either), or the id of any of its messages.", inputSchema: { thread_id: z.string().min(1), limit: limitArg() } },
    async ({ thread_id, limit }) => bus.mail.thread(thread_id, limitOf(limit, 100)),
  );
  tool(
    'message_status',
    {
      description:
        "Where mail you sent or received has got to: each recipient's copy is sent, delivered (put in front of its model or person) or read, with when and how (hook-user-prompt, hook-stop, hook-pre-tool, hook-watch, read_inbox, chat, web, inbox); state is the least advanced copy's. message_id: any id send_message returned (one of message_ids, or fanout_id for the whole send), its short form as a listing shows it, or the start of either.",
      inputSchema: { message_id: z.string().min(1) },
    },
    async ({ message_id }) => bus.receipts.status(message_id, session.name),
  );
  tool(
    'search_messages',
    {
      description:
        'Find mail by its words, newest first, each with a snippet: words (all must match), "quoted phrases" and prefix*. Finds your own mail and your repo\'s. from: a sender (a client address takes its sessions, a repo its agents); to: a recipient, a repo or *; since: a duration (2h, 7d) or a date; thread_id: a thread (or the start of its id).',
      inputSchema: { query: z.string().min(1), from: optionalText(), to: optionalText(), since: optionalText(), thread_id: optionalText(), limit: limitArg() },
    },
    async ({ query, from, to, since, thread_id, limit }) => {
      const hits = await bus.mail.search({ query, reader: session.name, from: from ?? null, to: to ?? null, since: since ?? null, thread: thread_id ?? null, limit: limitOf(limit, 20) });
      // The snippet as text with the matches in **bold** (as markdown shows them), and in parts for a program.
      return hits.map(({ snippet, ...hit }) => ({ ...hit, snippet: snippet.map((part) => (part.match ? `**${part.text}**` : part.text)).join(''), snippet_parts: snippet }));
    },
  );
  tool(
    'tail_audit',
    { description: 'The last entries of the audit log (any agent), oldest first.', inputSchema: { limit: limitArg() } },
    async ({ limit }) => kit.tailAudit(kit.auditPath, limitOf(limit, 50)),
  );
}
