/**
 * File reservations: an agent's (or a person's) hold on files or globs of one repo, exclusive or
 * shared, until released, expired, or its session is gone; what a write of another's file meets;
 * and the edits that show two agents writing one file.
 */
import { textRow, type AuditRow } from '../audit/record.js';
import type { AuditSink } from './audit-sink.js';
import { BusError, InvalidInputError } from '../model/errors.js';
import { formatStamp, stampOf, type Clock } from '../model/clock.js';
import { timeOrderedId } from '../model/ids.js';
import { quoted } from '../model/quote.js';
import { remainingText } from '../model/when.js';
import type { ReservationRecord } from '../model/records.js';
import type { Store } from '../store/ports.js';
import type { Collision, ReserveDecision } from '../store/ports/reservations.js';
import { clientAddressOf } from './names.js';
import { coversFile, FOLDS_CASE, patternsOverlap, reservationPath } from './reservation-paths.js';

/** The longest a reservation may be held before it must be renewed. */
export const MAX_RESERVATION_MS = 24 * 3_600_000;

/** A reservation as tools and commands show it. */
export interface ReservationView {
  id: string;
  repo: string;
  holder: string;
  path: string;
  mode: 'exclusive' | 'shared';
  since: string;
  until: string;
  reason: string | null;
}

/** A reservation refused: another holds what it asks for. */
export class ReservationConflictError extends BusError {
  constructor(
    message: string,
    readonly holder: string,
    readonly path: string,
  ) {
    super(message);
  }
}

export interface ReserveRequest {
  holder: string;
  repo: string;
  /** The repo's root on the reserver's machine, to make absolute paths relative. */
  repoRoot: string;
  paths: string[];
  /** How long it holds, in milliseconds; the default when absent. */
  ttlMs?: number;
  reason?: string | null;
  shared?: boolean;
  /** Made by a session: it ends with that session. */
  sessionBound: boolean;
}

export interface ReleaseRequest {
  /** Whose reservations: the caller's own, or (for a person releasing another's) the holder named. */
  holder: string;
  repo?: string | null;
  /** Release these paths (as reserved), or all of the holder's when null. */
  paths: string[] | null;
  repoRoot?: string | null;
  /** Who releases, for the audit: the holder, or the person releasing another's. */
  actor: string;
}

/** Another's reservation that covers a file a tool call would write. */
export interface HeldFile {
  file: string;
  holder: string;
  path: string;
  mode: 'exclusive' | 'shared';
  until: string;
  reason: string | null;
}

/** The files another holds against whoever asked (`holder`: that asker, as the check saw it). */
export interface FilesInTheWay {
  holder: string;
  held: HeldFile[];
}

export interface ReservationSettings {
  /** A reservation's time to live when none is asked for. */
  reservationTtlMs: number;
  /** How close two agents' writes of one file must be to be a collision. */
  collisionWindowMs: number;
}

export function viewOf(row: ReservationRecord): ReservationView {
  return { id: row.reservationId, repo: row.repo, holder: row.holder, path: row.pattern, mode: row.mode, since: row.createdAt, until: row.expiresAt, reason: row.reason };
}

/** One line naming the holder, the path, how long it still holds, and why. */
export function describeHold(holder: string, path: string, until: string, reason: string | null, nowMs: number): string {
  return `${quoted(path)} is reserved by ${holder} ${remainingText(until, nowMs)}${reason ? ` (${reason})` : ''}`;
}

function reservationRow(event: 'reserve' | 'release' | 'expire', ts: string, actor: string, row: ReservationRecord): AuditRow {
  return textRow(event, ts, actor, { id: row.reservationId, from: row.holder, to: row.repo, threadId: null, body: row.pattern }, {
    mode: row.mode,
    expires_at: row.expiresAt,
    reason: row.reason,
  });
}

/** The longest reason a reservation keeps: it is shown in one line wherever the hold stops someone. */
export const MAX_REASON_LENGTH = 200;

/** A reservation's reason, checked: one line of text (it goes into hooks' answers and terminals), or none. */
function reasonOf(given: string | null | undefined): string | null {
  const reason = given?.trim() || null;
  if (reason === null) return null;
  if (/\p{Cc}/u.test(reason)) throw new InvalidInputError('a reason is one line of text: no line breaks or control characters');
  if ([...reason].length > MAX_REASON_LENGTH) throw new InvalidInputError(`a reason is at most ${MAX_REASON_LENGTH} characters`);
  return reason;
}

export class Reservations {
  constructor(
    private readonly store: Store,
    private readonly audit: AuditSink,
    private readonly clock: Clock,
    private readonly settings: ReservationSettings,
    /** Names held by running sessions: a session-bound reservation of any other name is gone. */
    private readonly liveNames: () => Promise<Set<string>>,
  ) {}

  /** Reserve paths for a holder: all of them, or none when another's live reservation overlaps. */
  async reserve(request: ReserveRequest): Promise<ReservationView[]> {
    if (request.paths.length === 0) throw new InvalidInputError('name at least one path or glob to reserve');
    const ttlMs = request.ttlMs ?? this.settings.reservationTtlMs;
    if (!Number.isFinite(ttlMs) || ttlMs <= 0) throw new InvalidInputError('a reservation must last more than nothing');
    if (ttlMs > MAX_RESERVATION_MS) throw new InvalidInputError('a reservation lasts 24 hours at the most: reserve again to renew it');
    const patterns = [...new Set(request.paths.map((path) => reservationPath(path, request.repoRoot)))];
    const reason = reasonOf(request.reason);
    const mode = request.shared ? 'shared' : 'exclusive';
    const nowMicros = this.clock.nowMicros();
    const now = formatStamp(nowMicros);
    const until = formatStamp(nowMicros + ttlMs * 1000);
    // Whose session is gone is asked of the process table only when another session holds something here.
    const before = await this.store.reservationsAt(request.repo, now);
    const gone = before.some((row) => row.sessionBound && row.holder !== request.holder) ? await this.goneHolders() : () => false;
    const outcome = await this.store.reserve({
      repo: request.repo,
      now,
      decide: (current): ReserveDecision & { granted: ReservationRecord[]; conflict: ReservationRecord | null } => {
        const drop = current.filter((row) => gone(row)).map((row) => row.reservationId);
        const others = current.filter((row) => row.holder !== request.holder && !drop.includes(row.reservationId));
        for (const pattern of patterns) {
          for (const other of others) {
            if (mode === 'shared' && other.mode === 'shared') continue;
            if (!patternsOverlap(pattern, other.pattern)) continue;
            const refused = `${describeHold(other.holder, other.pattern, other.expiresAt, other.reason, nowMicros / 1000)}, which overlaps ${quoted(pattern)}: nothing was reserved`;
            return { grant: [], renew: [], drop: [], refused, granted: [], conflict: other };
          }
        }
        const own = current.filter((row) => row.holder === request.holder);
        const renew: Array<{ reservationId: string; expiresAt: string }> = [];
        const granted: ReservationRecord[] = [];
        const grant: ReservationRecord[] = [];
        for (const pattern of patterns) {
          const held = own.find((row) => row.pattern === pattern && row.mode === mode);
          if (held) {
            renew.push({ reservationId: held.reservationId, expiresAt: until });
            granted.push({ ...held, expiresAt: until, reason: reason ?? held.reason });
            continue;
          }
          const row: ReservationRecord = { reservationId: timeOrderedId(), repo: request.repo, holder: request.holder, pattern, mode, reason, createdAt: now, expiresAt: until, sessionBound: request.sessionBound };
          grant.push(row);
          granted.push(row);
        }
        return { grant, renew, drop, refused: null, granted, conflict: null };
      },
    });
    const { decision, ended } = outcome;
    this.audit.append(ended.map((row) => reservationRow('expire', now, 'agent-bus', row)));
    if (decision.refused !== null && decision.conflict !== null) throw new ReservationConflictError(decision.refused, decision.conflict.holder, decision.conflict.pattern);
    this.audit.append(decision.granted.map((row) => reservationRow('reserve', now, request.holder, row)));
    return decision.granted.map(viewOf);
  }

  /** Release a holder's reservations (all, or those paths); the ones released. */
  async release(request: ReleaseRequest): Promise<ReservationView[]> {
    const patterns = request.paths === null ? null : request.paths.map((path) => reservationPath(path, request.repoRoot ?? '/'));
    const released = await this.store.releaseReservations({ repo: request.repo ?? null, holder: request.holder, patterns });
    const now = stampOf(this.clock);
    this.audit.append(released.map((row) => reservationRow('release', now, request.actor, row)));
    return released.map(viewOf);
  }

  /** The live reservations, of one repo or all; those expired or whose session is gone are ended first. */
  async list(repo?: string | null): Promise<ReservationView[]> {
    await this.endStale();
    return (await this.store.reservationsAt(repo ?? null, stampOf(this.clock))).map(viewOf);
  }

  /** Others' live reservations covering these files (repo-relative), in that repo. */
  async heldByOthers(agent: string, repo: string, files: string[]): Promise<HeldFile[]> {
    if (files.length === 0) return [];
    const current = (await this.store.reservationsCovering({ repo, now: stampOf(this.clock), files, foldCase: FOLDS_CASE })).filter((row) => row.holder !== agent);
    const covering: Array<[string, ReservationRecord]> = [];
    for (const file of files) for (const row of current) if (coversFile(row.pattern, file)) covering.push([file, row]);
    // Whose session is gone is asked of the process table only when a session's reservation is in the way.
    const gone = covering.some(([, row]) => row.sessionBound) ? await this.goneHolders() : () => false;
    return covering
      .filter(([, row]) => !gone(row))
      .map(([file, row]) => ({ file, holder: row.holder, path: row.pattern, mode: row.mode, until: row.expiresAt, reason: row.reason }));
  }

  /**
   * Others' live reservations covering these files, for an agent that may hold some as its session
   * address: `reader` (which session address the agent reads as) is asked only when a hold of its
   * client address's sessions is in the way. `me` is who the files were checked for.
   */
  async heldAgainst(name: string, reader: () => Promise<string>, repo: string, files: string[]): Promise<{ me: string; held: HeldFile[] }> {
    const held = await this.heldByOthers(name, repo, files);
    const shared = clientAddressOf(name);
    if (!held.some((hold) => shared !== null && (hold.holder === shared || clientAddressOf(hold.holder) === shared))) return { me: name, held };
    const me = await reader();
    return { me, held: held.filter((hold) => hold.holder !== me) };
  }

  /** Others' live exclusive reservations in a repo, for a client whose hooks cannot tell which file a call writes. */
  async othersIn(agent: string, repo: string): Promise<ReservationView[]> {
    const others = (await this.store.reservationsAt(repo, stampOf(this.clock))).filter((row) => row.holder !== agent && row.mode === 'exclusive');
    const gone = others.some((row) => row.sessionBound) ? await this.goneHolders() : () => false;
    return others.filter((row) => !gone(row)).map(viewOf);
  }

  /** What a commit of these files meets: others' holds against `name` (or its session), each exclusive one audited as a denial when `refuse`. */
  async checkCommit(name: string, reader: () => Promise<string>, repo: string, files: string[], refuse: boolean): Promise<FilesInTheWay> {
    const { me, held } = await this.heldAgainst(name, reader, repo, files);
    if (refuse) for (const hold of held) if (hold.mode === 'exclusive') this.noteDenied(me, repo, hold);
    return { holder: me, held };
  }

  /** Note that a tool call refused an edit of another's file. */
  noteDenied(agent: string, repo: string, held: HeldFile): void {
    const now = stampOf(this.clock);
    this.audit.append([
      textRow('deny', now, agent, { id: held.path, from: agent, to: held.holder, threadId: null, body: held.file }, { repo, reserved: held.path, until: held.until }),
    ]);
  }

  /** Record a write, and the collisions it makes (each pair and file once per window), audited. */
  async recordWrite(agent: string, repo: string, file: string): Promise<Collision[]> {
    const nowMicros = this.clock.nowMicros();
    const at = formatStamp(nowMicros);
    const since = formatStamp(nowMicros - this.settings.collisionWindowMs * 1000);
    const collisions = await this.store.recordEdit({ edit: { repo, path: file, agent, at }, since });
    this.audit.append(
      collisions.map((collision) =>
        textRow('collision', at, agent, { id: file, from: agent, to: collision.other, threadId: null, body: file }, { repo, other_at: collision.otherAt }),
      ),
    );
    return collisions;
  }

  /** End what has expired, and session-bound reservations whose session is gone. */
  async endStale(): Promise<ReservationView[]> {
    const gone = await this.goneHolders();
    const now = stampOf(this.clock);
    const current = await this.store.reservationsAt(null, now);
    const ended = await this.store.endReservations(
      now,
      current.filter((row) => gone(row)).map((row) => row.reservationId),
    );
    this.audit.append(ended.map((row) => reservationRow('expire', now, 'agent-bus', row)));
    return ended.map(viewOf);
  }

  /** A test of whether a reservation's holder is gone: a session-bound one whose session no longer runs. */
  private async goneHolders(): Promise<(row: ReservationRecord) => boolean> {
    const running = await this.liveNames();
    return (row) => row.sessionBound && !running.has(row.holder);
  }
}
