/**
 * File reservations on the hot path and under contention:
 *
 * - the pre-tool hook on a Claude Code `Edit` of a file nobody else holds (so it goes ahead and is
 *   recorded), with 1,000 live reservations of other agents in the caller's repo and 10,000 more in
 *   100 other repos, against the floor (bench/hooks.ts: a bare Node.js opening the same database with
 *   the same driver) in the same rounds, at most 5 ms above it; the same hook on a bus with no
 *   reservations is timed in the same runs, to tell what the reservations cost;
 * - `reserve_files` over MCP (stdio, the official SDK client), each call reserving fresh paths and
 *   released (untimed) before the next, with a neighbour session holding some of the repo;
 * - 16 processes racing, each for the same 100 paths one at a time in its own shuffled order, on each
 *   engine: a path granted to two holders is a double grant. Afterwards the store must hold exactly
 *   one reservation per path, 100 in all, each of the holder that was told it got it.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { openBus } from '../src/runtime.js';
import { registrationsFor } from '../src/core/roster.js';
import { patternAnchor } from '../src/model/reservation-anchor.js';
import { formatStamp, nowMicros } from '../src/model/clock.js';
import { timeOrderedId } from '../src/model/ids.js';
import { SqliteStore } from '../src/store/sqlite/store.js';
import { connectServer } from './mcp.js';
import { floorArgs, holdBusOpen, overFloor } from './hooks.js';
import { CLI, ROOT, median, quantile, round, spawnTracked, timedQuiet, waitForExit, type BusLocation, type Engine, type Workspace } from './util.js';

export interface ReservationFigure {
  value: number | null;
  shown: string;
  details: Record<string, unknown>;
}

/** The caller's repo and its name on the bus. */
const REPO = 'shop';
const CALLER = `${REPO}/claude`;
const IN_REPO = 1_000;
const OTHER_REPOS = 100;
const PER_OTHER_REPO = 100;
/** The file the measured tool call edits: under none of the patterns below. */
const EDITED = 'src/app/main.ts';

/** A git work tree named after the repo inside the bus's HOME, its links resolved (as the hooks record it). */
function repoIn(location: BusLocation): string {
  const root = join(location.home, REPO);
  mkdirSync(join(root, '.git'), { recursive: true });
  mkdirSync(join(root, 'src', 'app'), { recursive: true });
  return realpathSync(root);
}

/**
 * The shapes of the reserved patterns, each with a file it covers (to check the seed is seen): literal
 * files (four in ten), directories, globs within a segment, braces, globs across segments.
 */
const SHAPES: ReadonlyArray<(index: number) => { pattern: string; file: string }> = [
  ...Array.from({ length: 4 }, () => (index: number) => ({ pattern: `src/mod-${index}/file-${index}.ts`, file: `src/mod-${index}/file-${index}.ts` })),
  ...Array.from({ length: 2 }, () => (index: number) => ({ pattern: `pkg-${index}/**`, file: `pkg-${index}/index.ts` })),
  ...Array.from({ length: 2 }, () => (index: number) => ({ pattern: `src/mod-${index}/*.test.ts`, file: `src/mod-${index}/a.test.ts` })),
  (index) => ({ pattern: `lib/{alpha,beta}-${index}.ts`, file: `lib/beta-${index}.ts` }),
  (index) => ({ pattern: `docs/part-${index}/**/*.md`, file: `docs/part-${index}/guide/intro.md` }),
];

const shapeOf = (index: number): { pattern: string; file: string } => (SHAPES[index % SHAPES.length] as (index: number) => { pattern: string; file: string })(index);
const patternOf = (index: number): string => shapeOf(index).pattern;
const fileUnder = (index: number): string => shapeOf(index).file;

interface SeededRow {
  repo: string;
  holder: string;
  pattern: string;
}

/** The reservations the pre-tool figure runs against: 1,000 in the caller's repo (25 holders), 100 in each of 100 other repos. */
function reservationSeed(): SeededRow[] {
  const rows: SeededRow[] = [];
  for (let index = 0; index < IN_REPO; index++) rows.push({ repo: REPO, holder: `${REPO}/agent-${index % 25}`, pattern: patternOf(index) });
  for (let repo = 0; repo < OTHER_REPOS; repo++) {
    for (let index = 0; index < PER_OTHER_REPO; index++) rows.push({ repo: `repo-${repo}`, holder: `repo-${repo}/agent-${index % 5}`, pattern: patternOf(index) });
  }
  return rows;
}

/**
 * Written with raw SQL on the store's own connection, in one transaction (the columns of
 * src/store/sqlite/schema.ts), after the bus has migrated it. Made from the CLI: no session ends them.
 */
async function seedReservations(location: BusLocation, rows: SeededRow[]): Promise<void> {
  const bus = openBus(location.env);
  await bus.reservations.list(REPO);
  await bus.close();
  const seeding = new SqliteStore(location.db);
  try {
    const db = seeding.connection;
    const insert = db.prepare(
      `INSERT INTO reservations (reservation_id, repo, holder, pattern, mode, reason, created_at, expires_at, session_bound, anchor)
       VALUES (?, ?, ?, ?, 'exclusive', ?, ?, ?, 0, ?)`,
    );
    const now = nowMicros();
    const since = formatStamp(now);
    const until = formatStamp(now + 4 * 3_600_000_000);
    db.immediate(() => {
      for (const [index, row] of rows.entries()) insert.run([timeOrderedId(), row.repo, row.holder, row.pattern, index % 3 === 0 ? `ticket ${index}` : null, since, until, patternAnchor(row.pattern)]);
    });
  } finally {
    await seeding.close();
  }
}


/** What Claude Code writes on the pre-tool hook's stdin for an Edit of `file`. */
function editPayload(root: string, file: string): string {
  return JSON.stringify({
    session_id: 'bench-session',
    cwd: root,
    hook_event_name: 'PreToolUse',
    tool_name: 'Edit',
    tool_input: { file_path: join(root, file), old_string: 'const retries = 1;', new_string: 'const retries = 2;' },
  });
}

// ---------------------------------------------------------------- the pre-tool hook

export async function preToolReservations(ws: Workspace): Promise<ReservationFigure> {
  const RUNS = 30;
  const WARMUP = 3;
  const rows = reservationSeed();
  const seeded = await ws.bus('pre-tool-reservations');
  const empty = await ws.bus('pre-tool-no-reservations');
  const places = [];
  for (const location of [seeded, empty]) {
    const root = repoIn(location);
    const bus = openBus(location.env);
    try {
      await bus.roster.register(registrationsFor(CALLER, root, true));
    } finally {
      await bus.close();
    }
    places.push({ location, root, env: { ...location.env, AGENT_BUS_NAME: CALLER, AGENT_BUS_REPO: root } });
  }
  await seedReservations(seeded, rows);
  const [withReservations, without] = places as [(typeof places)[number], (typeof places)[number]];

  // The seed is seen: a file under one of the caller's repo's reservations is refused, the measured one is not.
  const held = fileUnder(6);
  const refused = timedQuiet([CLI, 'hook-pre-tool', '--client', 'claude'], withReservations.env, withReservations.root, editPayload(withReservations.root, held)).stdout;
  if (!refused.includes('"permissionDecision":"deny"')) throw new Error(`an Edit of ${held}, reserved by another agent, was not refused: ${refused.slice(0, 300)}`);
  const bus = openBus(seeded.env);
  try {
    const live = await bus.reservations.list(null);
    if (live.length !== rows.length) throw new Error(`${live.length} live reservations, not ${rows.length}`);
    const holding = await bus.reservations.heldByOthers(CALLER, REPO, [EDITED]);
    if (holding.length > 0) throw new Error(`${EDITED} is held: ${JSON.stringify(holding[0])}`);
  } finally {
    await bus.close();
  }

  const hookArgs = [CLI, 'hook-pre-tool', '--client', 'claude'];
  const bare = ['-e', '0'];
  const floor = floorArgs(seeded);
  const times = { hook: [] as number[], empty: [] as number[], node: [] as number[], floor: [] as number[] };
  const kinds = floor === null ? (['hook', 'empty', 'node'] as const) : (['hook', 'empty', 'node', 'floor'] as const);
  const holders = [await holdBusOpen(seeded), await holdBusOpen(empty)];
  for (let run = 0; run < WARMUP + RUNS; run++) {
    // Each goes first, second, third and fourth in turn.
    const order = kinds.map((_, index, all) => all[(index + run) % all.length] as (typeof all)[number]);
    for (const which of order) {
      const place = which === 'empty' ? without : withReservations;
      const result =
        which === 'node' ? timedQuiet(bare, place.env, place.root, '') : which === 'floor' ? timedQuiet(floor ?? [], place.env, place.root, '') : timedQuiet(hookArgs, place.env, place.root, editPayload(place.root, EDITED));
      if ((which === 'hook' || which === 'empty') && result.stdout.trim() !== '') throw new Error(`the hook said something of an Edit of a file nobody holds: ${result.stdout.slice(0, 300)}`);
      if (run >= WARMUP) times[which].push(result.ms);
    }
  }
  for (const holder of holders) await holder.close();
  const hook = median(times.hook);
  const node = median(times.node);
  const none = median(times.empty);
  const figure = overFloor(times.hook, times.floor);
  return {
    value: figure.value,
    shown: `${figure.shown}; ${(none - median(times.floor)).toFixed(1)} ms above it with no reservations`,
    details: {
      runs: RUNS,
      warmup: WARMUP,
      tool: 'Edit',
      reservationsInRepo: IN_REPO,
      reservationsInOtherRepos: OTHER_REPOS * PER_OTHER_REPO,
      otherRepos: OTHER_REPOS,
      ...figure.details,
      nodeMedianMs: round(node),
      ratioToNode: round(hook / node, 3),
      // The same hook and Edit on a bus with no reservations: what the reservations themselves cost.
      noReservationsMedianMs: round(none),
      reservationsCostMs: round(hook - none),
    },
  };
}

export async function reserveFilesMcp(ws: Workspace): Promise<ReservationFigure> {
  const WARMUP = 200;
  const CALLS = 2_000;
  const NEIGHBOUR_HOLDS = 20;
  const location = await ws.bus('reserve-files-mcp');
  const root = repoIn(location);
  // Two sessions of one repo, as Claude Code starts them: the neighbour's reservations end with its session.
  const env = { ...location.env, AGENT_BUS_CLIENT: 'claude' };
  const neighbour = await connectServer(env, root, `${REPO}/codex`, { AGENT_BUS_CLIENT: 'codex' });
  const reserver = await connectServer(env, root, CALLER);
  try {
    const text = (result: Awaited<ReturnType<typeof reserver.client.callTool>>): string => (result.content as Array<{ text?: string }>)[0]?.text ?? '';
    const neighbourPaths = Array.from({ length: NEIGHBOUR_HOLDS }, (_, index) => (index % 2 === 0 ? `lib/part-${index}/**` : `src/shared/file-${index}.ts`));
    const held = await neighbour.client.callTool({ name: 'reserve_files', arguments: { paths: neighbourPaths, reason: 'refactoring the shared code' } });
    if (held.isError) throw new Error(`the neighbour's reserve_files failed: ${text(held)}`);
    const sessionBound = (JSON.parse(text(held)) as { reserved: Array<{ holder: string }> }).reserved[0]?.holder;
    const call = async (index: number): Promise<number> => {
      const paths = [`src/feature-${index}/**`, `test/feature-${index}.test.ts`];
      const started = performance.now();
      const result = await reserver.client.callTool({ name: 'reserve_files', arguments: { paths, reason: `feature ${index}` } });
      const elapsed = performance.now() - started;
      if (result.isError) throw new Error(`reserve_files failed: ${text(result)}`);
      const reserved = (JSON.parse(text(result)) as { reserved: unknown[] }).reserved;
      if (reserved.length !== paths.length) throw new Error(`reserve_files reserved ${reserved.length} paths, not ${paths.length}`);
      const released = await reserver.client.callTool({ name: 'release_files', arguments: { paths } });
      if (released.isError) throw new Error(`release_files failed: ${text(released)}`);
      return elapsed;
    };
    for (let index = 0; index < WARMUP; index++) await call(index);
    const times: number[] = [];
    for (let index = WARMUP; index < WARMUP + CALLS; index++) times.push(await call(index));
    // Refused is refused: the neighbour's hold is in the way of a glob over it.
    const refused = await reserver.client.callTool({ name: 'reserve_files', arguments: { paths: ['src/**'] } });
    if (!refused.isError) throw new Error(`reserve_files of src/** went through over the neighbour's ${neighbourPaths[1]}`);
    const p50 = median(times);
    const p99 = quantile(times, 0.99);
    return {
      value: round(p50, 3),
      shown: `p50 ${p50.toFixed(2)} ms, p99 ${p99.toFixed(2)} ms`,
      details: {
        calls: CALLS,
        warmup: WARMUP,
        pathsPerCall: 2,
        neighbourReservations: NEIGHBOUR_HOLDS,
        neighbourHolder: sessionBound ?? null,
        p50Ms: round(p50, 3),
        p99Ms: round(p99, 3),
        maxMs: round(Math.max(...times), 3),
      },
    };
  } finally {
    await reserver.client.close();
    await neighbour.client.close();
  }
}

// ---------------------------------------------------------------- 16 processes racing for 100 paths

const RACERS = 16;
const RACE_PATHS = 100;
const RACE_ROUNDS = 3;
const WORKER = join(ROOT, 'bench', 'reservation-race-worker.mjs');

interface RaceReport {
  holder: string;
  granted: Array<{ path: string; id: string }>;
  refused: number;
  errors: string[];
  ms: number;
}

/** A child's stdout, line by line: `next` waits for the next line, failing when the child dies or is silent too long. */
export function lineReader(child: ChildProcess, label: string): (ms: number) => Promise<string> {
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const lines: string[] = [];
  let waiting: { resolve: (line: string) => void; reject: (error: Error) => void } | null = null;
  let ended: string | null = null;
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
    if (waiting === null) lines.push(line);
    else waiting.resolve(line);
  });
  child.once('exit', (code, signal) => {
    ended = `${label} exited (${code ?? signal}): ${stderr.trim()}`;
    waiting?.reject(new Error(ended));
  });
  return (ms) =>
    new Promise((resolveLine, reject) => {
      const queued = lines.shift();
      if (queued !== undefined) return resolveLine(queued);
      if (ended !== null) return reject(new Error(ended));
      const timer = setTimeout(() => reject(new Error(`${label} said nothing within ${ms} ms: ${stderr.trim()}`)), ms);
      waiting = {
        resolve: (line) => {
          clearTimeout(timer);
          waiting = null;
          resolveLine(line);
        },
        reject: (error) => {
          clearTimeout(timer);
          waiting = null;
          reject(error);
        },
      };
    });
}

/** One round: RACERS processes, each with the bus open and ready, told to go at once. */
async function raceRound(location: BusLocation, turn: number): Promise<{ repo: string; reports: RaceReport[]; wallMs: number }> {
  const repo = `race-${turn}`;
  const paths = Array.from({ length: RACE_PATHS }, (_, index) => `src/module-${String(index).padStart(3, '0')}.ts`);
  const workers = Array.from({ length: RACERS }, (_, index) => {
    const holder = `${repo}/agent-${String(index + 1).padStart(2, '0')}`;
    const child = spawnTracked(process.execPath, [WORKER, holder, repo, JSON.stringify(paths), String(turn * 1_000 + index)], {
      env: location.env,
      cwd: location.home,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    return { holder, child, next: lineReader(child, holder) };
  });
  try {
    const ready = workers.map(({ next }) => next(60_000));
    for (const line of await Promise.all(ready)) if (line !== 'ready') throw new Error(`a racer said ${line}`);
    const reports = workers.map(({ next }) => next(120_000));
    const started = performance.now();
    for (const { child } of workers) child.stdin?.write('go\n');
    const done = (await Promise.all(reports)).map((line) => JSON.parse(line) as RaceReport);
    return { repo, reports: done, wallMs: performance.now() - started };
  } finally {
    await Promise.all(workers.map(({ child }) => waitForExit(child, 10_000)));
  }
}

export async function reservationRace(ws: Workspace, engine: Engine = 'sqlite'): Promise<ReservationFigure> {
  const location = await ws.bus(`reservation-race-${engine}`, engine);
  // Migrated before the racers open it.
  const setup = openBus(location.env);
  await setup.reservations.list(null);
  await setup.close();

  let doubleGrants = 0;
  const problems: string[] = [];
  const rounds: Array<Record<string, unknown>> = [];
  const walls: number[] = [];
  for (let turn = 1; turn <= RACE_ROUNDS; turn++) {
    const { repo, reports, wallMs } = await raceRound(location, turn);
    walls.push(wallMs);
    const grantedTo = new Map<string, Array<{ holder: string; id: string }>>();
    for (const report of reports) {
      for (const grant of report.granted) grantedTo.set(grant.path, [...(grantedTo.get(grant.path) ?? []), { holder: report.holder, id: grant.id }]);
    }
    const told = [...grantedTo.values()].reduce((sum, list) => sum + list.length, 0);
    const doubled = [...grantedTo.entries()].filter(([, list]) => list.length > 1);
    doubleGrants += doubled.reduce((sum, [, list]) => sum + list.length - 1, 0);
    for (const [path, list] of doubled.slice(0, 3)) problems.push(`round ${turn}: ${path} was granted to ${list.map((grant) => grant.holder).join(' and ')}`);

    // What the store holds afterwards: one reservation per path, the one its holder was told of.
    const bus = openBus(location.env);
    let stored;
    try {
      stored = await bus.reservations.list(repo);
    } finally {
      await bus.close();
    }
    const storedBy = new Map<string, typeof stored>();
    for (const row of stored) storedBy.set(row.path, [...(storedBy.get(row.path) ?? []), row]);
    const storedTwice = [...storedBy.entries()].filter(([, list]) => list.length > 1);
    if (storedTwice.length > 0) {
      // Held twice in the store though no racer was told twice: a double grant all the same.
      doubleGrants += Math.max(0, storedTwice.reduce((sum, [, list]) => sum + list.length - 1, 0) - doubled.length);
      problems.push(`round ${turn}: the store holds ${storedTwice.length} paths more than once (${storedTwice[0]?.[0]})`);
    }
    if (stored.length !== RACE_PATHS) problems.push(`round ${turn}: the store holds ${stored.length} reservations, not ${RACE_PATHS}`);
    if (told !== RACE_PATHS) problems.push(`round ${turn}: ${told} grants were reported, not ${RACE_PATHS}`);
    const mismatched = stored.filter((row) => !(grantedTo.get(row.path) ?? []).some((grant) => grant.id === row.id && grant.holder === row.holder));
    if (mismatched.length > 0) problems.push(`round ${turn}: ${mismatched.length} stored reservations are not the grant their holder was told of (${mismatched[0]?.path})`);
    const errors = reports.flatMap((report) => report.errors);
    if (errors.length > 0) problems.push(`round ${turn}: ${errors.length} reserve calls failed (${errors[0]})`);
    const perHolder = reports.map((report) => report.granted.length);
    rounds.push({
      repo,
      granted: told,
      refused: reports.reduce((sum, report) => sum + report.refused, 0),
      errors: errors.length,
      stored: stored.length,
      grantsPerHolderMin: Math.min(...perHolder),
      grantsPerHolderMax: Math.max(...perHolder),
      holdersWithGrants: perHolder.filter((count) => count > 0).length,
      wallMs: round(wallMs),
      slowestRacerMs: round(Math.max(...reports.map((report) => report.ms))),
    });
  }
  if (doubleGrants === 0 && problems.length > 0) throw new Error(problems.join('; '));
  const attempts = RACERS * RACE_PATHS;
  return {
    value: doubleGrants,
    shown: `${doubleGrants} double grants (${RACERS} processes × ${RACE_PATHS} paths, ${RACE_ROUNDS} rounds; ${round(median(walls) / attempts, 3)} ms an attempt)`,
    details: {
      engine,
      racers: RACERS,
      paths: RACE_PATHS,
      rounds: RACE_ROUNDS,
      attemptsPerRound: attempts,
      doubleGrants,
      problems,
      medianRoundMs: round(median(walls)),
      attemptsPerSecond: Math.round(attempts / (median(walls) / 1000)),
      perRound: rounds,
    },
  };
}
