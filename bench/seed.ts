/**
 * A large, realistic bus for the inbox-read figure, written with raw SQL in
 * one transaction on the store's own connection (the column lists are those
 * of src/store/sqlite/schema.ts).
 *
 * The roster: `repos` repos, each with ten names: the client addresses
 * `<repo>/claude`, `<repo>/codex`, `<repo>/gemini`, the sessions
 * `<repo>/claude-1..4` and `<repo>/codex-1..3`.
 *
 * The mail, oldest first: direct mail between random agents, repo fan-outs
 * (one copy per client address, `to_group` set, claimed by a session of the
 * repo once read) and a few `*` broadcasts (one copy per client address of
 * every repo). Nearly all of it is read; about 5% of the newest tenth and
 * 0.05% of the rest is not. Newest of all: the mail the measured readers
 * will find (two direct messages each; for sessions one more at their client
 * address; an unclaimed fan-out to their repo) and one `*` broadcast nobody
 * has read yet.
 */
import { randomUUID } from 'node:crypto';
import type { SqliteConnection } from '../src/store/sqlite/driver.js';
import { spawnSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { formatStamp } from '../src/model/clock.js';
import { copyBus } from '../src/core/store-copy.js';
import { openStoreAt } from '../src/runtime.js';
import { SqliteStore } from '../src/store/sqlite/store.js';
import { progress, type BusLocation, type Engine, type Workspace } from './util.js';

export interface SeedOptions {
  messages: number;
  repos: number;
  /** Readers that each get a few unread messages, in the order they will read. */
  readers: number;
}

export interface SeedResult {
  agents: number;
  messages: number;
  unread: number;
  fanouts: number;
  broadcasts: number;
  readers: ReaderPlan[];
  seconds: number;
}

export interface ReaderPlan {
  name: string;
  kind: 'session' | 'client';
}

const CLIENTS = ['claude', 'codex', 'gemini'] as const;
const SESSIONS: Record<(typeof CLIENTS)[number], number> = { claude: 4, codex: 3, gemini: 0 };
const BROADCASTS = 20;
const GROUP_FANOUT_SHARE = 0.045; // of sends
const DAY_MICROS = 86_400_000_000;

/** A small deterministic PRNG (mulberry32), so every run seeds the same bus. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = (
  'please review the login form before merge the tests on main are failing again i pushed a fix for the flaky ' +
  'migration can you rebase onto my branch the api returns 500 when the token expires done see commit for details ' +
  'blocked on the schema change which file owns the retry logic picking this up now'
).split(' ');

function bodies(random: () => number): string[] {
  const list: string[] = [];
  for (let index = 0; index < 64; index++) {
    const words: string[] = [];
    const count = 8 + Math.floor(random() * 60);
    for (let w = 0; w < count; w++) words.push(WORDS[Math.floor(random() * WORDS.length)] as string);
    list.push(words.join(' '));
  }
  return list;
}

function repoName(index: number): string {
  return `repo${String(index).padStart(4, '0')}`;
}

export function seedLargeBus(db: SqliteConnection, options: SeedOptions): SeedResult {
  const started = Date.now();
  const random = prng(20_260_101);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
  const bodyPool = bodies(random);
  const nowMicros = Date.now() * 1000;
  const startMicros = nowMicros - 60 * DAY_MICROS;
  const recentMicros = nowMicros - 10 * 60_000_000; // the readers' unread mail is newer than this
  const stamp = (micros: number): string => formatStamp(Math.floor(micros));

  // ---- the roster
  const repos: string[] = [];
  const agents: string[] = [];
  const sessionsOf = new Map<string, string[]>();
  const insertAgent = db.prepare(
    `INSERT INTO agents (name, repo_path, registered_at, last_seen, group_name, client, topic) VALUES (?, ?, ?, ?, ?, ?, ?)`,
  );
  const insertMessage = db.prepare(
    `INSERT INTO messages (message_id, from_agent, to_agent, body, thread_id, sent_at, read_at, delivered_at,
       addressed_to, fanout_id, to_group, claimed_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );

  let written = 0;
  let unread = 0;
  let fanouts = 0;
  let broadcasts = 0;
  const progressEvery = Math.max(1, Math.floor(options.messages / 10));
  let nextProgress = progressEvery;
  const message = (
    from: string,
    to: string,
    body: string,
    thread: string,
    sentAt: string,
    readAt: string | null,
    addressedTo: string,
    fanoutId: string | null,
    toGroup: string | null,
    claimedBy: string | null,
  ): void => {
    insertMessage.run([randomUUID(), from, to, body, thread, sentAt, readAt, readAt, addressedTo, fanoutId, toGroup, claimedBy]);
    written++;
    if (readAt === null) unread++;
    if (written >= nextProgress) {
      const seconds = (Date.now() - started) / 1000;
      progress(`seeded ${written.toLocaleString('en-US')} messages (${Math.round(written / seconds).toLocaleString('en-US')}/s)`);
      nextProgress += progressEvery;
    }
  };

  // A big page cache for the load only: random UUID keys touch every page of the primary-key index.
  const cacheSize = db.pragma('cache_size') as number;
  db.exec('PRAGMA cache_size = -262144');
  db.exec('BEGIN IMMEDIATE');
  try {
    const registeredAt = stamp(startMicros - 30 * DAY_MICROS);
    for (let r = 0; r < options.repos; r++) {
      const repo = repoName(r);
      repos.push(repo);
      const sessions: string[] = [];
      for (const client of CLIENTS) {
        const lastSeen = stamp(nowMicros - random() * 3 * DAY_MICROS);
        const address = `${repo}/${client}`;
        insertAgent.run([address, `/home/dev/src/${repo}`, registeredAt, lastSeen, repo, client, null]);
        agents.push(address);
        for (let s = 1; s <= SESSIONS[client]; s++) {
          const session = `${address}-${s}`;
          insertAgent.run([session, `/home/dev/src/${repo}`, registeredAt, lastSeen, repo, null, null]);
          agents.push(session);
          sessions.push(session);
        }
      }
      sessionsOf.set(repo, sessions);
    }
    const sessionOf = (repo: string): string => pick(sessionsOf.get(repo) as string[]);

    // ---- what the measured readers will find, and the unread broadcast: written last, counted now
    const readers: ReaderPlan[] = [];
    for (let index = 0; index < options.readers; index++) {
      const repo = repos[index % repos.length] as string;
      // Four in five readers are sessions; the rest read as a client address without sessions.
      readers.push(index % 5 === 4 ? { name: `${repo}/gemini`, kind: 'client' } : { name: `${repo}/claude-1`, kind: 'session' });
    }
    const perReader = (reader: ReaderPlan): number => (reader.kind === 'session' ? 2 + 1 + CLIENTS.length : 2 + CLIENTS.length);
    const reserved = readers.reduce((sum, reader) => sum + perReader(reader), 0) + repos.length * CLIENTS.length;
    const background = options.messages - reserved;
    if (background < 0) throw new Error('too few messages for the readers asked for');

    // ---- the history
    const span = recentMicros - startMicros;
    const freshFrom = background * 0.9;
    const broadcastEvery = Math.floor(background / (BROADCASTS + 1));
    let nextBroadcast = broadcastEvery;
    let thread = randomUUID();
    let threadLeft = 0;
    while (written < background) {
      const at = startMicros + (span * written) / background;
      const sentAt = stamp(at);
      const unreadChance = written >= freshFrom ? 0.05 : 0.0005;
      const readAt = (): string | null => (random() < unreadChance ? null : stamp(at + 1_000_000 + random() * 7_200_000_000));
      const body = pick(bodyPool);
      const remaining = background - written;
      const from = pick(agents);
      if (written >= nextBroadcast && remaining >= repos.length * CLIENTS.length) {
        nextBroadcast += broadcastEvery;
        broadcasts++;
        const fanout = randomUUID();
        const broadcastThread = randomUUID();
        for (const repo of repos) {
          const read = readAt();
          const claimer = read === null ? null : sessionOf(repo);
          for (const client of CLIENTS) message(from, `${repo}/${client}`, body, broadcastThread, sentAt, read, '*', fanout, repo, claimer);
        }
        continue;
      }
      if (random() < GROUP_FANOUT_SHARE && remaining >= CLIENTS.length) {
        fanouts++;
        const repo = pick(repos);
        const read = readAt();
        const claimer = read === null ? null : sessionOf(repo);
        const fanout = randomUUID();
        const fanoutThread = randomUUID();
        for (const client of CLIENTS) message(from, `${repo}/${client}`, body, fanoutThread, sentAt, read, repo, fanout, repo, claimer);
        continue;
      }
      if (threadLeft-- <= 0) {
        thread = randomUUID();
        threadLeft = Math.floor(random() * 6);
      }
      const to = pick(agents);
      message(from, to, body, thread, sentAt, readAt(), to, null, null, null);
    }

    // ---- the newest mail: the readers' few unread messages, then one broadcast nobody has read
    const reservedStep = (nowMicros - 1_000_000 - recentMicros) / reserved;
    let at = recentMicros;
    const next = (): string => stamp((at += reservedStep));
    for (const reader of readers) {
      const repo = reader.name.slice(0, reader.name.indexOf('/'));
      for (let k = 0; k < 2; k++) message(pick(agents), reader.name, pick(bodyPool), randomUUID(), next(), null, reader.name, null, null, null);
      if (reader.kind === 'session') {
        const shared = `${repo}/claude`;
        message(`${repo}/codex-1`, shared, pick(bodyPool), randomUUID(), next(), null, shared, null, null, null);
      }
      fanouts++;
      const fanout = randomUUID();
      const fanoutThread = randomUUID();
      const sentAt = next();
      const from = `${repoName((repos.indexOf(repo) + 1) % repos.length)}/codex-2`;
      for (const client of CLIENTS) message(from, `${repo}/${client}`, pick(bodyPool), fanoutThread, sentAt, null, repo, fanout, repo, null);
    }
    broadcasts++;
    const fanout = randomUUID();
    const broadcastThread = randomUUID();
    const sentAt = next();
    const body = pick(bodyPool);
    for (const repo of repos) {
      for (const client of CLIENTS) message('human', `${repo}/${client}`, body, broadcastThread, sentAt, null, '*', fanout, repo, null);
    }
    db.exec('COMMIT');
    progress('checkpointing the WAL');
    db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    return {
      agents: agents.length,
      messages: written,
      unread,
      fanouts,
      broadcasts,
      readers,
      seconds: (Date.now() - started) / 1000,
    };
  } catch (error) {
    if (db.inTransaction) db.exec('ROLLBACK');
    throw error;
  } finally {
    db.exec(`PRAGMA cache_size = ${cacheSize}`);
  }
}

/**
 * A large bus on `engine`: seeded in SQLite, then (for PostgreSQL) moved over as a user moves
 * theirs with `store copy`, and the server's planner told about it.
 */
export async function largeBus(ws: Workspace, engine: Engine, name: string, options: SeedOptions): Promise<{ location: BusLocation; seed: SeedResult }> {
  const seeded = await ws.bus(`${name}-seed-${engine}`);
  const location = engine === 'sqlite' ? seeded : await ws.bus(`${name}-${engine}`, engine);
  progress(`seeding ${options.messages.toLocaleString('en-US')} messages and ${(options.repos * 10).toLocaleString('en-US')} agents`);
  const seedStore = new SqliteStore(seeded.db);
  let seed: SeedResult;
  try {
    seed = seedLargeBus(seedStore.connection, options);
  } finally {
    await seedStore.close();
  }
  progress(`seeded in ${seed.seconds.toFixed(1)} s: ${seed.unread.toLocaleString('en-US')} unread`);
  if (engine !== 'sqlite') {
    const started = performance.now();
    const [from, to] = [openStoreAt(seeded.db, seeded.env), openStoreAt(location.db, location.env)];
    try {
      await copyBus(from, to);
    } finally {
      await from.close();
      await to.close();
    }
    const analyzed = spawnSync('psql', ['-X', '-q', '-d', location.db, '-c', 'ANALYZE'], { encoding: 'utf8' });
    if (analyzed.status !== 0) throw new Error(`ANALYZE failed: ${analyzed.stderr}`);
    progress(`copied to PostgreSQL in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }
  return { location, seed };
}
