/**
 * `agent-bus doctor`: one screen of what is wrong with this machine's bus and
 * how to fix each thing, one line per fix. Exit 1 when anything is wrong; a
 * warning alone (something to look at) leaves it 0.
 */
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { shownName } from '../../audit/files.js';
import { brainSettings } from '../../brain/settings.js';
import { brainStatus } from '../../brain/status.js';
import { DEFAULT_CLIENT, profileFor } from '../../clients/registry/profiles.js';
import { settingsProject } from '../../clients/profile.js';
import { sessionSubscriptionSource } from '../../clients/subscription-source.js';
import { WIRINGS, wiringFor } from '../../clients/registry/wirings.js';
import { gitRoot } from '../../adapters/identity.js';
import { LOCAL_BIN_VARIABLE } from '../../clients/wiring.js';
import { hookToolsSince, supportsHookTools, type HookWay } from '../../clients/hook-entries.js';
import { HOOK_TOOL } from '../../protocol/tool-names.js';
import type { Bus } from '../../core/bus.js';
import { readLog } from '../../core/audit-check.js';
import { busPaths, type BusPaths } from '../../adapters/paths.js';
import { privacyProblems } from '../../adapters/privacy.js';
import { isSettingName, setting, SETTINGS, settingProblem, WAKE_COMMAND_VARIABLES, type Env } from '../../model/settings.js';
import { sqliteDriverName, type SqliteDriverName } from '../../store/sqlite/driver.js';
import { errorLine, quoted } from '../../model/quote.js';
import { closeMatches } from '../../core/similarity.js';
import type { BusClient } from '../../client/bus-client.js';
import { openBusHere } from '../../runtime.js';
import { openClient } from '../../connect.js';
import { loadWakeConfig } from '../../wake/config.js';
import { withWakeWays } from '../../wake/ways.js';
import { wakeText } from '../../render/roster.js';
import { version } from '../main.js';
import { launcherFor, onPath } from './init.js';
import { clientNode } from '../../clients/client-node.js';
import type { CommandRunner } from '../spec.js';

type Level = 'ok' | 'warn' | 'fail';

interface Finding {
  check: string;
  level: Level;
  detail: string;
  /** One line that says what to do; none when all is well. */
  fix?: string;
}

/** The Node.js versions agent-bus runs on (package.json's engines). */
const SUPPORTED_NODE = [
  [20, 19],
  [22, 12],
  [24, 0],
] as const;

export const run: CommandRunner = async (args, io) => {
  const findings: Finding[] = [];
  const add = (finding: Finding): void => {
    findings.push(finding);
  };
  const paths = busPaths(io.env);
  add(versions(paths.database.engine === 'sqlite' ? sqliteDriverName(setting(io.env, 'AGENT_BUS_SQLITE_DRIVER')) : null));
  findings.push(...settingsHealth(io.env));
  // This machine's store is looked at from the inside; a hub's from here, by asking it who this machine is.
  const client = openClient(io.env, { cwd: io.cwd, as: null });
  if (client.location.kind === 'hub') {
    add(await hubReachable(client, client.location));
  } else {
    let bus: Bus | null = null;
    try {
      bus = openBusHere(io.env);
      add(await storeHealth(bus, paths));
    } catch (error) {
      add({ check: 'store', level: 'fail', detail: `cannot open the store at ${paths.database.engine === 'sqlite' ? paths.db : 'AGENT_BUS_DB'}: ${errorLine((error as Error).message)}`, fix: storeFix(paths) });
      bus = null;
    }
    if (bus !== null) {
      try {
        findings.push(...(await auditHealth(bus, paths)));
        findings.push(...(await wiringHealth(bus, io.env, io.cwd)));
        add(await sessionsHealth(bus));
        add(await wakeWaysHealth(bus, io.env));
        const outbound = await outboundHealth(bus);
        if (outbound !== null) add(outbound);
        const brain = await brainHealth(bus, io.env, io.cwd);
        if (brain !== null) add(brain);
      } finally {
        await bus.close();
      }
    }
  }
  findings.push(...driftHere(io.env, io.cwd, findings));
  findings.push(...permissionsHealth(paths));
  add(wakeHealth(io.env));
  const failed = findings.filter((finding) => finding.level === 'fail').length;
  const warned = findings.filter((finding) => finding.level === 'warn').length;
  if (args.values.json) {
    io.stdout.write(`${JSON.stringify({ ok: failed === 0, problems: failed, warnings: warned, checks: findings })}\n`);
  } else {
    const mark = { ok: 'ok  ', warn: 'warn', fail: 'FAIL' } as const;
    const lines = findings.map((finding) => `${mark[finding.level]}  ${finding.check}: ${finding.detail}${finding.fix ? `\n        fix: ${finding.fix}` : ''}`);
    const summary = failed === 0 ? `all is well${warned > 0 ? ` (${warned} warning${warned === 1 ? '' : 's'})` : ''}` : `${failed} problem${failed === 1 ? '' : 's'}${warned > 0 ? `, ${warned} warning${warned === 1 ? '' : 's'}` : ''}`;
    io.stdout.write(`${lines.join('\n')}\n${summary}\n`);
  }
  return failed === 0 ? 0 : 1;
};

/** How each SQLite driver is named to a person. */
const DRIVER_SHOWN: Record<SqliteDriverName, string> = { builtin: "Node.js's built-in node:sqlite", 'better-sqlite3': 'the better-sqlite3 addon' };

function versions(driver: SqliteDriverName | null): Finding {
  const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
  const supported = SUPPORTED_NODE.some(([wantMajor, wantMinor]) => major === wantMajor && minor >= wantMinor);
  const detail = `agent-bus ${version()} on Node.js ${process.versions.node}${driver === null ? '' : `, SQLite through ${DRIVER_SHOWN[driver]}`}`;
  return supported
    ? { check: 'versions', level: 'ok', detail }
    : { check: 'versions', level: 'fail', detail: `${detail}, which agent-bus does not support`, fix: 'use Node.js 20.19+, 22.12+ or 24, then reinstall agent-bus with it' };
}

/** What looks like a setting but is none (a typo, most likely). */
const SETTING_PREFIX = /^(AGENT_BUS|BRAIN)_/;
const WHERE_SETTINGS_ARE = 'docs/configuration.md lists every setting and what it takes';

/**
 * The settings in the environment: a variable named like one that agent-bus does not read, and a
 * value it cannot read as written (it uses another, which the finding names). Warnings only: the
 * bus runs either way, on its defaults.
 */
function settingsHealth(env: Env): Finding[] {
  const names = Object.keys(env)
    .filter((name) => (env[name] ?? '') !== '')
    .sort();
  const findings: Finding[] = [];
  for (const name of names) {
    const raw = env[name] as string;
    if (isSettingName(name)) {
      const problem = settingProblem(name, raw);
      if (problem !== null) findings.push({ check: 'settings', level: 'warn', detail: `${name}=${quoted(raw)} ${problem}`, fix: `set ${name} to a value it reads, or unset it (${WHERE_SETTINGS_ARE})` });
    } else if (SETTING_PREFIX.test(name) && !(WAKE_COMMAND_VARIABLES as readonly string[]).includes(name)) {
      const [near] = closeMatches(name, Object.keys(SETTINGS), 1);
      findings.push({
        check: 'settings',
        level: 'warn',
        detail: `${name} is set, but agent-bus reads no setting of that name`,
        fix: near !== undefined ? `did you mean ${near}? Rename it, or unset it` : `unset it (${WHERE_SETTINGS_ARE})`,
      });
    }
  }
  if (findings.length > 0) return findings;
  const set = names.filter(isSettingName);
  return [{ check: 'settings', level: 'ok', detail: set.length === 0 ? 'none set: every setting has its default' : `${set.join(', ')} set, each read as written` }];
}

function storeFix(paths: BusPaths): string {
  return paths.database.engine === 'sqlite'
    ? `stop the bus's clients and restore ${paths.db} from a backup (a migration keeps one as ${paths.db}.bak-*), or move it aside to start a new bus`
    : 'check that PostgreSQL is running and AGENT_BUS_DB is right (agent-bus agents says why it cannot connect)';
}

async function storeHealth(bus: Bus, paths: BusPaths): Promise<Finding> {
  const health = await bus.health.integrity();
  const where = health.engine === 'sqlite' ? `SQLite ${paths.db}` : `PostgreSQL ${bus.health.location}`;
  if (health.problems.length > 0) {
    return { check: 'store', level: 'fail', detail: `${where}: the integrity check found ${health.problems.length} problem(s), first: ${health.problems[0]}`, fix: storeFix(paths) };
  }
  if (health.schemaVersion !== health.targetVersion) {
    return { check: 'store', level: 'fail', detail: `${where}: schema ${health.schemaVersion}, this agent-bus writes ${health.targetVersion}`, fix: 'upgrade agent-bus on every machine that uses this store' };
  }
  return { check: 'store', level: 'ok', detail: `${where}, schema ${health.schemaVersion}, integrity ok` };
}

async function auditHealth(bus: Bus, paths: BusPaths): Promise<Finding[]> {
  const { chain, sendRows, prunedBefore } = readLog(paths.audit);
  const findings: Finding[] = [];
  const [first] = chain.problems;
  if (first !== undefined) {
    findings.push({
      check: 'audit log',
      level: 'fail',
      detail: `the hash chain breaks at ${shownName(first.file, paths.audit)}:${first.line}: ${first.message}${chain.problems.length > 1 ? ` (and ${chain.problems.length - 1} more)` : ''}`,
      fix: "agent-bus audit verify lists every bad line; keep the file as it is (it is the evidence) and look at who wrote to it",
    });
  } else {
    findings.push({ check: 'audit log', level: 'ok', detail: chain.head === null ? `${paths.audit}: nothing logged yet` : `${paths.audit}: chain intact to seq ${chain.head.seq}` });
  }
  if (chain.torn.length > 0) {
    findings.push({
      check: 'audit log',
      level: 'warn',
      detail: `${chain.torn.length} line(s) cut short by a write whose process was killed (first ${shownName(chain.torn[0]?.file ?? paths.audit, paths.audit)}:${chain.torn[0]?.line ?? 0})`,
      fix: 'agent-bus audit verify --repair logs again any send among them; the chain goes on past them',
    });
  }
  const store = await bus.auditCheck.check(sendRows, prunedBefore);
  if (store.missing.length > 0) {
    findings.push({ check: 'audit log', level: 'fail', detail: `${store.missing.length} stored message(s) have no send row (a send stopped between storing and logging)`, fix: 'agent-bus audit verify --repair' });
  }
  if (store.unknown.length > 0) {
    findings.push({ check: 'audit log', level: 'fail', detail: `${store.unknown.length} send row(s) name a message the store does not have`, fix: 'agent-bus audit verify names them; check that AGENT_BUS_DB is the bus this log belongs to' });
  }
  return findings;
}

function permissionsHealth(paths: BusPaths): Finding[] {
  const problems = privacyProblems(paths);
  if (problems.length === 0) return [{ check: 'permissions', level: 'ok', detail: `${paths.folder} and its files are private to you` }];
  return problems.map((problem) => ({ check: 'permissions', level: 'fail', detail: `${problem.path} is ${problem.problem}`, fix: problem.fix }));
}

/** A path to an agent-bus a config names: the command of a server or a hook. */
const BIN_IN_TEXT = /(\/[^\s"'`\\;|&]+\/(?:agent-bus|cli\.cjs))(?=["'`\s\\;|&]|$)/g;

/** What an older init left in files a team commits: the agent and its repo named outright. */
const OLDER_INIT_IN_TEXT = /\bAGENT_BUS_(?:REPO|NAME)\b/;

/** The kind of hook a client's files hold: calls of the server's hook tool, or commands. */
function hookWayIn(texts: string[]): HookWay {
  return texts.some((text) => text.includes('"mcp_tool"') && text.includes(HOOK_TOOL)) ? 'mcp' : 'command';
}

/** A wired client whose files are as init writes them: which kind of hook it runs, and whether its installed version runs that kind. */
function hookKindFinding(what: string, client: string, way: HookWay, env: Env, rewire: string): Finding {
  const profile = profileFor(client);
  if (profile.hooksByServer) return { check: 'wiring', level: 'ok', detail: `${what}: its extension in place (hooks answered by its server, no process)` };
  const since = hookToolsSince(profile);
  if (since === null) return { check: 'wiring', level: 'ok', detail: `${what}: server and hooks in place (command hooks)` };
  const { supported, version } = supportsHookTools(profile, env);
  if (way === 'mcp') {
    if (supported === false && version !== null) {
      return {
        check: 'wiring',
        level: 'warn',
        detail: `${what}: its hooks are answered by its server, which ${profile.name} ${version} does not do (${since} and later): its hooks do not run`,
        fix: `upgrade ${profile.name} to ${since} or later, or ${rewire} --hooks command`,
      };
    }
    return { check: 'wiring', level: 'ok', detail: `${what}: server and hooks in place (hooks answered by the server, no process)` };
  }
  const upgrade = supported === true ? `; ${profile.name} ${version} can answer them in its server, with no process: ${rewire}` : '';
  return { check: 'wiring', level: 'ok', detail: `${what}: server and hooks in place (command hooks${upgrade})` };
}

async function wiringHealth(bus: Bus, env: Env, cwd: string): Promise<Finding[]> {
  const wired = new Map<string, { repo: string; client: string; name: string }>();
  for (const agent of await bus.roster.agents()) {
    if (agent.client === null || wiringFor(agent.client) === undefined || agent.kind === 'session') continue;
    wired.set(`${agent.repo_path}\u0000${agent.client}`, { repo: agent.repo_path, client: agent.client, name: agent.name });
  }
  if (wired.size === 0) return [{ check: 'wiring', level: 'ok', detail: 'no repo is wired yet (agent-bus init wires one)' }];
  // What init would write now, keeping this machine's agent-bus where a personal file names it.
  const launcher = { ...launcherFor(undefined, env, cwd), local: 'keep' as const };
  const findings: Finding[] = [];
  for (const { repo, client, name } of [...wired.values()].sort((a, b) => (a.repo + a.client < b.repo + b.client ? -1 : 1))) {
    const wiring = wiringFor(client);
    if (wiring === undefined) continue;
    const what = `${name} (${client} in ${repo})`;
    const rewire = `agent-bus init --clients ${client} ${repo}`;
    if (!existsSync(repo)) {
      findings.push({ check: 'wiring', level: 'warn', detail: `${what}: the repo folder is gone`, fix: `agent-bus forget ${name}` });
      continue;
    }
    const seen = wiring.inspect(repo);
    if (seen.status === 'unreadable') {
      findings.push({ check: 'wiring', level: 'fail', detail: `${what}: ${seen.problem ?? 'a config file cannot be parsed'}`, fix: `fix the file by hand, then ${rewire}` });
      continue;
    }
    if (seen.status === 'absent') {
      findings.push({ check: 'wiring', level: 'fail', detail: `${what}: no agent-bus server in ${wiring.files(repo).join(' or ')}`, fix: rewire });
      continue;
    }
    // The kind of hook the files hold is theirs to keep: what init would write is compared in that kind.
    const committed = wiring.files(repo).map((path) => (existsSync(path) ? readFileSync(path, 'utf8') : ''));
    const way = hookWayIn(committed);
    let planned;
    try {
      planned = wiring.plan(repo, launcher, null, way);
    } catch (error) {
      findings.push({ check: 'wiring', level: 'fail', detail: `${what}: ${(error as Error).message}`, fix: `fix the file by hand, then ${rewire}` });
      continue;
    }
    const personal = planned.files.filter((file) => file.personal).map((file) => file.before ?? '');
    const missingBins = [...new Set([...committed, ...personal].flatMap((text) => [...text.matchAll(BIN_IN_TEXT)].map((match) => match[1] as string)))].filter((path) => !existsSync(path));
    if (missingBins.length > 0) {
      findings.push({ check: 'wiring', level: 'fail', detail: `${what}: points at ${missingBins[0]}, which does not exist`, fix: `${rewire} (or --bin-path to say where agent-bus is)` });
      continue;
    }
    if (seen.status === 'handwritten') {
      findings.push({ check: 'wiring', level: 'warn', detail: `${what}: a hand-written agent-bus entry; its hooks are not checked`, fix: `${rewire} --force, to let init manage it` });
      continue;
    }
    // Files for another version of the client than the one installed: it may start, and do nothing.
    const drift = wiring.drift?.(repo, env) ?? null;
    if (drift !== null) {
      findings.push({ check: 'wiring', level: 'fail', detail: `${what}: ${drift}`, fix: rewire });
      continue;
    }
    // Wired for a hub: what init writes depends on the hub's URL, which its files name.
    const remote = committed.some((text) => text.includes('AGENT_BUS_URL'));
    if (!remote && planned.files.some((file) => file.after !== (file.before ?? ''))) {
      const older = committed.some((text) => OLDER_INIT_IN_TEXT.test(text) || [...text.matchAll(BIN_IN_TEXT)].length > 0);
      findings.push({
        check: 'wiring',
        level: 'fail',
        detail: older
          ? `${what}: written by an older init, with this machine's paths in files the team commits`
          : `${what}: differs from what init writes (a hook missing, or another agent-bus)`,
        fix: rewire,
      });
      continue;
    }
    // The committed files run the bare command: it must be found, unless this machine's personal file names its own.
    const ownBin = planned.files.some((file) => file.personal && (file.before ?? '').includes(LOCAL_BIN_VARIABLE));
    if (!ownBin && onPath(launcher.command, env) === null) {
      findings.push({
        check: 'wiring',
        level: 'fail',
        detail: `${what}: its files run ${launcher.command}, which is not on PATH here`,
        fix: `install it (npm install -g agent-bus)${wiring.personalFile === undefined ? ', or put it on PATH' : `, or ${rewire} --bin-path PATH (kept in ${wiring.personalFile})`}`,
      });
      continue;
    }
    findings.push(hookKindFinding(what, client, way, env, rewire), ...clientLimits(what, client, env));
    const node = nodeFinding(what, client, env);
    if (node !== null) findings.push(node);
    const approval = wiring.approvalProblem?.(repo, env.HOME ?? homedir()) ?? null;
    if (approval !== null) {
      findings.push({
        check: 'wiring',
        level: 'warn',
        detail: `${what}: ${approval}: its sessions run without the bus's tools, but under --yolo`,
        fix: `start ${profileFor(client).command} in ${repo} and approve the agent-bus server when it asks (/mcp)`,
      });
    }
  }
  return findings;
}

/** What a wired client needs on PATH and cannot do, said plainly: a command missing fails, a limit is noted. */
function clientLimits(what: string, client: string, env: Env): Finding[] {
  const profile = profileFor(client);
  const missing = (profile.needsOnPath ?? []).filter(({ command }) => onPath(command, env) === null);
  const limits = profile.limits ?? [];
  return [
    ...missing.map(({ command, why }): Finding => ({ check: 'wiring', level: 'fail', detail: `${what}: ${command} is not on PATH here: ${why}`, fix: `install ${command}, or put it on PATH` })),
    ...(limits.length === 0 ? [] : [{ check: 'wiring', level: 'ok' as const, detail: `${what}: what ${profile.name} cannot do: ${limits.join('; ')}` }]),
  ];
}

/** A wired client that needs a newer Node.js than agent-bus (ClientProfile.needsNode), found on PATH here starting with an older one. */
function nodeFinding(what: string, client: string, env: Env): Finding | null {
  const profile = profileFor(client);
  const needs = profile.needsNode ?? null;
  const bin = needs === null ? null : onPath(profile.command, env);
  if (needs === null || bin === null) return null;
  const node = clientNode(bin, needs, env);
  if (node === null || !node.tooOld) return null;
  return {
    check: 'wiring',
    level: 'warn',
    detail: `${what}: ${profile.name} needs Node.js ${needs.join('.')} or later, and ${bin} runs on Node.js ${node.version ?? '?'} here: its sessions may not start, or fail part-way`,
    fix: `install Node.js ${needs.join('.')} or later and put it first on PATH (then reinstall ${profile.name} with it)`,
  };
}

/**
 * The repo doctor runs in, wired for another version of a client than the one installed: checked
 * whatever the roster says, since a repo wired for a hub is on no roster of this machine's.
 */
function driftHere(env: Env, cwd: string, already: readonly Finding[]): Finding[] {
  const repo = gitRoot(cwd);
  if (repo === null) return [];
  const found: Finding[] = [];
  for (const wiring of Object.values(WIRINGS)) {
    if (wiring.drift === undefined || wiring.inspect(repo).status !== 'managed') continue;
    const drift = wiring.drift(repo, env);
    if (drift === null || already.some((finding) => finding.detail.includes(drift))) continue;
    found.push({ check: 'wiring', level: 'fail', detail: `${wiring.profile.name} in ${repo}: ${drift}`, fix: `agent-bus init --clients ${wiring.profile.id} ${repo}` });
  }
  return found;
}

/** How each running session is woken when mail comes while it is idle; a socket given up is a warning. */
async function wakeWaysHealth(bus: Bus, env: Env): Promise<Finding> {
  const sessions = withWakeWays(await bus.roster.agents(), env).filter((agent) => agent.kind === 'session' && agent.live === true);
  if (sessions.length === 0) return { check: 'wake ways', level: 'ok', detail: 'no session is running' };
  const detail = sessions.map((agent) => `${agent.name}: ${wakeText(agent) ?? 'nothing waits for its mail now'}`).join('; ');
  if (!sessions.some((agent) => agent.wake?.way === 'socket-refused')) return { check: 'wake ways', level: 'ok', detail };
  return {
    check: 'wake ways',
    level: 'warn',
    detail,
    fix: "its watcher wakes a session whose inbox socket was given up; a Claude Code whose socket takes no post from agent-bus may be newer than it: update agent-bus (AGENT_BUS_SOCKET_TURN_SECONDS gives a slow machine's turns longer to begin)",
  };
}

async function sessionsHealth(bus: Bus): Promise<Finding> {
  const stale = await bus.sessions.stale();
  if (stale.length === 0) return { check: 'sessions', level: 'ok', detail: 'every open session has a running process' };
  // A client running on without its server: hooks its server answers reach nothing, and its mail waits.
  const cut = stale.filter((row) => bus.sessions.clientRunsOn(row));
  if (cut.length > 0) {
    const names = cut.slice(0, 3).map((row) => row.name).join(', ');
    return {
      check: 'sessions',
      level: 'warn',
      detail: `${cut.length} session(s) whose client runs on without its agent-bus server (${names}${cut.length > 3 ? ', …' : ''}): their hooks reach nothing, so their mail waits unread`,
      fix: 'reconnect the server in the client (/mcp in Claude Code) or restart the session; the mail is delivered at its next hook',
    };
  }
  const names = stale.slice(0, 3).map((row) => row.name).join(', ');
  return {
    check: 'sessions',
    level: 'warn',
    detail: `${stale.length} session(s) not ended whose process is gone (${names}${stale.length > 3 ? ', …' : ''}); each holds its address until a new session of its client starts`,
    fix: 'nothing to do: the next start of that client gives the address back (their mail waits for it)',
  };
}

/** Integrations out: events that failed for good, or that wait with nothing to post them. */
async function outboundHealth(bus: Bus): Promise<Finding | null> {
  const standing = (await bus.integrations.standing()).filter((row) => row.direction === 'out');
  if (standing.length === 0) return null;
  const failing = standing.filter((row) => row.failed > 0);
  if (failing.length > 0) {
    return {
      check: 'integrations',
      level: 'warn',
      detail: failing.map((row) => `${row.name}: ${row.failed} failed`).join(', '),
      fix: 'agent-bus integration outbox --state failed says why; agent-bus integration retry EVENT_ID sends one again',
    };
  }
  const queued = standing.reduce((sum, row) => sum + row.queued, 0);
  const served = await bus.outbound.servedBy();
  if (queued > 0 && served === null) {
    return {
      check: 'integrations',
      level: 'warn',
      detail: `${queued} event(s) out queued and no process serving the outbox`,
      fix: 'run the hub (agent-bus serve --http), or on one machine an MCP server, agent-bus chat or agent-bus web',
    };
  }
  return { check: 'integrations', level: 'ok', detail: `${standing.length} out, ${queued} event(s) queued${served === null ? '' : `, posted by ${served}`}` };
}

async function brainHealth(bus: Bus, env: Env, cwd: string): Promise<Finding | null> {
  const settings = brainSettings(env);
  if (!settings.enabled) return null;
  // As the default client's sessions would see them.
  const client = profileFor(DEFAULT_CLIENT);
  const status = await brainStatus(bus, settings, sessionSubscriptionSource(env, client, settingsProject(client, env) ?? cwd));
  if (status.last_error !== null) {
    return { check: 'brain', level: 'fail', detail: `${status.source_location} is unreachable: ${status.last_error}`, fix: 'check BRAIN_URL or BRAIN_SOURCE_PATH, then agent-bus brain refresh' };
  }
  if (status.warnings.length > 0) return { check: 'brain', level: 'warn', detail: status.warnings[0] as string, fix: 'agent-bus brain status says more' };
  return { check: 'brain', level: 'ok', detail: `${status.entry_count} entr${status.entry_count === 1 ? 'y' : 'ies'} from ${status.source_location} in channel ${status.channel}` };
}

function wakeHealth(env: Env): Finding {
  const config = loadWakeConfig(env);
  if (!config.exists) return { check: 'wake.json', level: 'ok', detail: 'none (native wake only)' };
  if (config.problem !== null) return { check: 'wake.json', level: 'fail', detail: `${config.path}: ${config.problem}; senders ignore it`, fix: `fix it by hand, or agent-bus wake-config clear NAME and set it again` };
  return { check: 'wake.json', level: 'ok', detail: `${config.path}: ${Object.keys(config.entries).length} entr${Object.keys(config.entries).length === 1 ? 'y' : 'ies'}` };
}

async function hubReachable(client: BusClient, hub: { url: string; from: 'env' | 'login' }): Promise<Finding> {
  try {
    return { check: 'hub', level: 'ok', detail: `${hub.url} answers; this machine speaks as ${await client.speaker()}` };
  } catch (error) {
    return { check: 'hub', level: 'fail', detail: `${hub.url}: ${errorLine((error as Error).message)}`, fix: `check the hub is running and the token (${hub.from === 'env' ? 'AGENT_BUS_TOKEN' : 'agent-bus login'}) is current` };
  }
}
