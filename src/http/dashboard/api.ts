/**
 * The dashboard's API: JSON over GET for what it shows, POST for what it
 * changes. Each answer does what the CLI or an MCP tool does for the same
 * ask, with the same validation and the same errors, as the signed-in actor.
 */
import { tailAudit } from '../../audit/log.js';
import type { AuditRow } from '../../audit/record.js';
import { brainSettings } from '../../brain/settings.js';
import { brainStatus } from '../../brain/status.js';
import { refreshBrain } from '../../brain/refresh.js';
import { matchesActivity } from '../../core/activity-filter.js';
import type { Bus } from '../../core/bus.js';
import { BROADCAST, clientAddressOf } from '../../core/names.js';
import type { Env } from '../../model/settings.js';
import type { AgentView } from '../../core/views.js';
import { InvalidInputError, NotFoundError } from '../../model/errors.js';
import { nowStamp } from '../../model/clock.js';
import { quoted } from '../../model/quote.js';
import { loadWakeConfig } from '../../wake/config.js';
import { ForbiddenError } from '../errors.js';
import type { DashboardActor } from './access.js';
import { FLEET_GET_ROUTES, FLEET_POST_ROUTES, type DashboardFleet } from './fleet-api.js';
import { flag, text, whole, type Body, type Query } from './input.js';

export interface ApiContext {
  bus: Bus;
  env: Env;
  auditPath: string;
  actor: DashboardActor;
  version: string;
  /** This machine's fleet (`agent-bus web`), or null where the dashboard starts no process (the hub). */
  fleet: DashboardFleet | null;
  /** The roster, kept a moment (completion asks at every key). */
  agents(): Promise<AgentView[]>;
}

/** The audit rows a view reads back through at most, looking for ones that match. */
const ACTIVITY_SCAN = 5_000;
const WAKE_ROWS = 50;
const COMPLETIONS = 20;
const TASK_HISTORY_ROWS = 100;
const INTEGRATION_ROWS = 30;
/** Unread messages of the signed-in person's the page lists at most. */
const INBOX_ROWS = 50;

function recentRows(path: string, limit: number, keep: (row: AuditRow) => boolean): AuditRow[] {
  return tailAudit(path, ACTIVITY_SCAN).filter(keep).slice(-limit);
}

export const GET_ROUTES: Record<string, (context: ApiContext, query: Query) => Promise<unknown>> = {
  '/api/me': async ({ actor, bus, version, fleet }) => ({ name: actor.name, place: actor.place, version, store: actor.place === 'local' ? bus.health.location : null, may_clear_notices: actor.mayClearNotices, may_release_reservations: actor.mayReleaseReservations, may_spawn: fleet !== null, may_control_runners: actor.place === 'hub' && actor.mayStart === true, now: nowStamp() }),
  '/api/roster': ({ bus }, query) => bus.overview.rosterPage(whole(query, 'offset', 0, 1_000_000), Math.max(1, whole(query, 'limit', 50, 500)), query.get('filter') ?? ''),
  '/api/activity': async ({ auditPath }, query) => {
    const filter = { agent: query.get('agent') ?? '', op: query.get('op') ?? '', thread: query.get('thread') ?? '' };
    return { rows: recentRows(auditPath, Math.max(1, whole(query, 'limit', 100, 1_000)), (row) => matchesActivity(row, filter)) };
  },
  '/api/threads': ({ bus }, query) => {
    const before = query.get('before');
    return bus.overview.threadPage(before === null || before === '' ? null : whole(query, 'before', 0, Number.MAX_SAFE_INTEGER), Math.max(1, whole(query, 'limit', 30, 200)));
  },
  '/api/thread': async ({ bus, actor }, query) => {
    const id = query.get('id') ?? '';
    if (id === '') throw new InvalidInputError('id is required: the thread to show');
    // Drawn for the signed-in person: the copies addressed to them are delivered (by `web`).
    return { thread_id: id, ...(await bus.overview.threadView(id, { reader: actor.name, via: 'web' })) };
  },
  '/api/status': async ({ bus, actor }, query) => {
    const id = query.get('id') ?? '';
    if (id === '') throw new InvalidInputError('id is required: the message whose receipts to show');
    // As the signed-in name: its own mail and mail to it, as message_status answers.
    return bus.receipts.status(id, actor.name);
  },
  '/api/names': async ({ agents }, query) => {
    const wanted = (query.get('q') ?? '').trim().toLowerCase();
    const roster = await agents();
    const repos = [...new Set(roster.filter((agent) => agent.name.includes('/')).map((agent) => agent.group))].sort();
    const pool = [BROADCAST, ...repos, ...roster.map((agent) => agent.name).filter((name) => !repos.includes(name))];
    return { names: pool.filter((name) => name.toLowerCase().includes(wanted)).slice(0, COMPLETIONS) };
  },
  // The signed-in person's unread mail, looked at and not taken: a copy is marked delivered only once
  // its thread is opened on the page (/api/thread), and read only by a read (agent-bus inbox).
  '/api/inbox': async ({ bus, actor }) => ({ name: actor.name, messages: await bus.inbox.read({ reader: actor.name, markRead: false, via: null, limit: INBOX_ROWS }) }),
  '/api/notices': async ({ bus }) => ({ now: nowStamp(), notices: await bus.notices.list({}), channels: await bus.notices.channels() }),
  // Every repo's, as `agent-bus reservations` lists them: those expired or whose session is gone are ended first.
  '/api/reservations': async ({ bus }) => ({ now: nowStamp(), reservations: await bus.reservations.list() }),
  // Every task, in every state: the board's columns.
  '/api/tasks': async ({ bus }) => ({ now: nowStamp(), tasks: await bus.tasks.list({ states: null }) }),
  '/api/task': async ({ bus, auditPath }, query) => {
    const id = query.get('id') ?? '';
    if (id === '') throw new InvalidInputError('id is required: the task to show');
    const task = await bus.tasks.get(id);
    // Its history: every change of state the audit log holds for it.
    return { task, history: recentRows(auditPath, TASK_HISTORY_ROWS, (row) => row.op === 'task' && row.message_id === task.id) };
  },
  '/api/brain': ({ bus, env }) => brainStatus(bus, brainSettings(env), null),
  '/api/wake': async ({ env, auditPath, actor }) => {
    const config = loadWakeConfig(env);
    // The commands are the hub machine's to know: over the hub each entry says only whether it is set.
    const entries = actor.place === 'local' ? config.entries : Object.fromEntries(Object.entries(config.entries).map(([key, entry]) => [key, entry === false ? false : '(a command, on the hub)']));
    return { path: actor.place === 'local' ? config.path : 'wake.json on the hub', exists: config.exists, problem: config.problem, entries, rows: recentRows(auditPath, WAKE_ROWS, (row) => row.op === 'wake') };
  },
  '/api/mail': ({ bus }) => bus.overview.mailDay(),
  // Each integration (no secret, URLs masked) with how its deliveries stand; what came in, and the events out.
  '/api/integrations': async ({ bus, auditPath }) => {
    const integrations = await bus.integrations.standing();
    const inbound = new Set(integrations.filter((row) => row.direction === 'in').map((row) => row.name));
    const deliveredIn = (row: AuditRow): boolean => ((row.op === 'send' || (row.op === 'notice' && row.notice_event === 'publish')) && inbound.has(String(row.actor))) || (row.op === 'integration' && ['refused', 'dropped'].includes(String(row.event)));
    return { integrations, in: inbound.size === 0 ? [] : recentRows(auditPath, INTEGRATION_ROWS, deliveredIn), out: await bus.integrations.outbox({ limit: INTEGRATION_ROWS }) };
  },
  ...FLEET_GET_ROUTES,
};

export const POST_ROUTES: Record<string, (context: ApiContext, body: Body) => Promise<unknown>> = {
  '/api/send': ({ bus, actor }, body) =>
    bus.mail.send({
      from: actor.name,
      to: text(body, 'to', true) as string,
      body: text(body, 'body', true) as string,
      threadId: text(body, 'thread_id'),
      register: actor.registrations,
      urgent: flag(body, 'urgent'),
    }),
  '/api/notices': ({ bus, actor }, body) =>
    bus.notices.publish(
      {
        message: text(body, 'message', true) as string,
        channel: text(body, 'channel'),
        severity: text(body, 'severity'),
        ttl: text(body, 'ttl'),
        title: null,
        priority: null,
        source: actor.name,
      },
      actor.name,
    ),
  '/api/notices/clear': async ({ bus, actor }, body) => {
    if (!actor.mayClearNotices) throw new ForbiddenError("clearing notices for everyone is done on the hub's own machine (agent-bus channel clear there)");
    const noticeId = text(body, 'notice_id');
    if (noticeId !== null) return { cleared: await bus.notices.clear({ noticeId }, actor.name) };
    if (body.all === true) return { cleared: await bus.notices.clear({ all: true }, actor.name) };
    if (!Object.hasOwn(body, 'channel')) throw new InvalidInputError('say what to clear: notice_id, channel, or all');
    return { cleared: await bus.notices.clear({ channel: text(body, 'channel') }, actor.name) };
  },
  // As the one signed in: the person here, or a token's agent on the hub (its own tasks only, as over MCP).
  '/api/tasks': ({ bus, actor }, body) =>
    bus.tasks.create({ creator: actor.name, title: text(body, 'title', true) as string, to: text(body, 'to', true) as string, body: text(body, 'body') }, actor.registrations),
  '/api/tasks/cancel': ({ bus, actor }, body) => bus.tasks.cancel(text(body, 'id', true) as string, actor.name, text(body, 'reason')),
  '/api/tasks/reassign': ({ bus, actor }, body) => bus.tasks.reassign(text(body, 'id', true) as string, text(body, 'to', true) as string, actor.name),
  '/api/reservations/release': async ({ bus, actor }, body) => {
    const id = text(body, 'reservation_id', true) as string;
    const held = (await bus.reservations.list()).find((reservation) => reservation.id === id);
    if (held === undefined) throw new NotFoundError(`no live reservation ${quoted(id)}: it was released or has expired`);
    // Anyone's for the person at the bus's own machine; over the hub a token's own (its sessions' too) only.
    const own = held.holder === actor.name || clientAddressOf(held.holder) === actor.name;
    if (!actor.mayReleaseReservations && !own) {
      throw new ForbiddenError(`over the hub a token releases only its own agent's reservations: release ${held.holder}'s on the hub's machine (agent-bus release --holder ${held.holder} there)`);
    }
    // The path as reserved (already relative to the repo root), audited as released by the one signed in.
    return { released: await bus.reservations.release({ holder: held.holder, repo: held.repo, paths: [held.path], repoRoot: '/', actor: actor.name }) };
  },
  // Anyone signed in: it posts again an event the bus made already, nothing new.
  '/api/integrations/retry': ({ bus, actor }, body) => bus.integrations.retry(text(body, 'event_id', true) as string, actor.name),
  '/api/brain/refresh': async ({ bus, env }) => {
    const settings = brainSettings(env);
    return { channel: settings.channel, ...(await refreshBrain(bus, settings)) };
  },
  ...FLEET_POST_ROUTES,
};
