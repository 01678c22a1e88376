/** `agent-bus doctor`: a healthy bus passes; each kind of damage is named with its fix, and exits 1. */
import { hasBuiltinSqlite } from '../../src/store/sqlite/driver.js';
import assert from 'node:assert/strict';
import { chmodSync, copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { CLI, runCli, tempBus, ON_POSTGRES, type TempBus } from '../helpers/bus-env.js';
import { createToken, startHub } from '../helpers/hub.js';

interface Finding {
  check: string;
  level: 'ok' | 'warn' | 'fail';
  detail: string;
  fix?: string;
}

interface DoctorReport {
  ok: boolean;
  problems: number;
  checks: Finding[];
}

function doctor(bus: TempBus, env: NodeJS.ProcessEnv = {}): { code: number | null; report: DoctorReport; text: string; stderr: string } {
  const result = runCli(['doctor', '--json'], { env: { ...bus.env, ...env } });
  const text = runCli(['doctor'], { env: { ...bus.env, ...env } });
  assert.equal(text.code, result.code, 'the text and JSON reports agree');
  return { code: result.code, report: JSON.parse(result.stdout) as DoctorReport, text: text.stdout, stderr: result.stderr };
}

/** A bus with one repo wired for Claude Code, Codex, Gemini CLI and Copilot CLI by the real init, agent-bus on PATH as a copy of the CLI. */
const WIRED = ['claude', 'codex', 'gemini', 'copilot'];

function wiredBus(): { bus: TempBus; repo: string; bin: string } {
  const bus = tempBus();
  const repo = join(bus.dir, 'shop');
  mkdirSync(join(repo, '.git'), { recursive: true });
  const bin = join(bus.dir, 'bin', 'agent-bus');
  mkdirSync(join(bus.dir, 'bin'));
  copyFileSync(CLI, bin);
  chmodSync(bin, 0o755);
  bus.env.PATH = `${join(bus.dir, 'bin')}:${bus.env.PATH ?? ''}`;
  // Init alone puts each client on the roster: doctor then knows where it is wired.
  const init = runCli(['init', '--clients', WIRED.join(','), repo], { env: bus.env, cwd: repo });
  assert.equal(init.code, 0, init.stderr);
  return { bus, repo, bin };
}

function failing(report: DoctorReport): Finding[] {
  return report.checks.filter((finding) => finding.level === 'fail');
}

test('doctor: a healthy wired bus passes every check and exits 0', () => {
  const { bus } = wiredBus();
  try {
    const { code, report, text } = doctor(bus);
    assert.equal(code, 0, JSON.stringify(failing(report)));
    assert.equal(report.ok, true);
    const checks = new Set(report.checks.map((finding) => finding.check));
    for (const check of ['versions', 'store', 'audit log', 'permissions', 'wiring', 'sessions', 'wake.json']) assert.ok(checks.has(check), `checks ${check}`);
    const wiring = report.checks.filter((finding) => finding.check === 'wiring');
    assert.deepEqual(wiring.map((finding) => /shop\/([a-z]+)/.exec(finding.detail)?.[1]).sort(), [...WIRED].sort(), 'each client of the repo');
    for (const finding of wiring) assert.equal(finding.level, 'ok', finding.detail);
    assert.match(report.checks.find((finding) => finding.check === 'store')?.detail ?? '', ON_POSTGRES ? /^PostgreSQL .*integrity ok/ : /^SQLite .*integrity ok/);
    assert.match(text, /^ok {4}versions: agent-bus \S+ on Node\.js/m);
    // The SQLite driver this Node.js uses: its own where it has one.
    const builtin = hasBuiltinSqlite();
    if (!ON_POSTGRES) assert.match(text, builtin ? /^ok {4}versions: .*, SQLite through Node\.js's built-in node:sqlite$/m : /^ok {4}versions: .*, SQLite through the better-sqlite3 addon$/m);
    assert.match(text, /all is well/);
  } finally {
    bus.cleanup();
  }
});

test('doctor: each problem is named with a one-line fix, and it exits 1', () => {
  const { bus, repo, bin } = wiredBus();
  try {
    chmodSync(bus.audit, 0o644);
    writeFileSync(join(bus.folder, 'wake.json'), '{ not json');
    // Claude Code's hooks taken out by hand.
    const settingsPath = join(repo, '.claude', 'settings.json');
    const settings = JSON.parse(readFileSync(settingsPath, 'utf8')) as { hooks?: unknown };
    delete settings.hooks;
    writeFileSync(settingsPath, JSON.stringify(settings));
    // Gemini CLI's AfterTool hook taken out by hand.
    const geminiPath = join(repo, '.gemini', 'settings.json');
    const gemini = JSON.parse(readFileSync(geminiPath, 'utf8')) as { hooks: Record<string, unknown> };
    delete gemini.hooks.AfterTool;
    writeFileSync(geminiPath, JSON.stringify(gemini));
    // The audit log changed by hand.
    const lines = readFileSync(bus.audit, 'utf8').split('\n');
    lines[1] = (lines[1] as string).replace('"actor":"', '"actor":"z');
    writeFileSync(bus.audit, lines.join('\n'));
    const { code, report, text } = doctor(bus);
    assert.equal(code, 1);
    assert.equal(report.ok, false);
    const problems = failing(report);
    const find = (check: string, pattern: RegExp): Finding | undefined => problems.find((finding) => finding.check === check && pattern.test(finding.detail));
    assert.ok(find('permissions', /audit\.log is readable by anyone/), JSON.stringify(problems));
    assert.equal(find('permissions', /audit\.log/)?.fix, `chmod 600 ${bus.audit}`);
    assert.ok(find('wake.json', /not valid JSON/));
    assert.ok(find('wiring', /shop\/claude .*differs from what init writes/));
    assert.ok(find('wiring', /shop\/gemini .*differs from what init writes/), JSON.stringify(problems));
    assert.equal(find('wiring', /shop\/gemini/)?.fix, `agent-bus init --clients gemini ${repo}`);
    assert.equal(find('wiring', /shop\/claude/)?.fix, `agent-bus init --clients claude ${repo}`);
    assert.ok(find('audit log', /breaks at audit\.log:2/));
    for (const problem of problems) {
      assert.ok(problem.fix && !problem.fix.includes('\n'), `${problem.check}: one fix line`);
    }
    assert.match(text, /^FAIL {2}permissions: .*\n {8}fix: chmod 600 /m);
    assert.match(text, /\d+ problems/);
    // The agent-bus the committed files run is gone from PATH.
    rmSync(bin);
    const gone = doctor(bus);
    assert.ok(failing(gone.report).some((finding) => finding.check === 'wiring' && /^shop\/codex .*its files run agent-bus, which is not on PATH here$/.test(finding.detail)), JSON.stringify(failing(gone.report)));
    // The agent-bus this machine's personal file names is gone.
    const own = join(bus.dir, 'own', 'agent-bus');
    mkdirSync(join(bus.dir, 'own'));
    copyFileSync(CLI, own);
    chmodSync(own, 0o755);
    assert.equal(runCli(['init', '--clients', 'claude', '--bin-path', own, repo], { env: bus.env, cwd: repo }).code, 0);
    assert.equal(failing(doctor(bus).report).some((finding) => finding.detail.startsWith('shop/claude')), false, 'the personal file names one that is there');
    rmSync(own);
    const ownGone = doctor(bus);
    assert.ok(failing(ownGone.report).some((finding) => finding.check === 'wiring' && finding.detail.includes(`points at ${own}, which does not exist`)), JSON.stringify(failing(ownGone.report)));
  } finally {
    bus.cleanup();
  }
});

test('doctor: a store it cannot open, and a hub it cannot reach, are problems with a fix, never a stack trace', { skip: ON_POSTGRES ? 'a corrupt file is a SQLite case' : false }, () => {
  const bus = tempBus();
  try {
    assert.equal(runCli(['send', 'hello', '--to', 'me', '--name', 'me'], { env: bus.env }).code, 0);
    writeFileSync(bus.db, 'this is not a database'.repeat(100));
    rmSync(`${bus.db}-wal`, { force: true });
    rmSync(`${bus.db}-shm`, { force: true });
    const broken = doctor(bus);
    assert.equal(broken.code, 1);
    const store = failing(broken.report).find((finding) => finding.check === 'store');
    assert.match(store?.detail ?? '', /cannot open the store/);
    assert.ok(store?.fix);
    assert.doesNotMatch(broken.text + broken.stderr, /\n\s+at /, 'no stack trace');
    const hub = doctor(bus, { AGENT_BUS_URL: 'http://127.0.0.1:1', AGENT_BUS_TOKEN: 'abt_0123456789abcdef_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' });
    assert.equal(hub.code, 1);
    const finding = failing(hub.report).find((item) => item.check === 'hub');
    assert.match(finding?.detail ?? '', /^http:\/\/127\.0\.0\.1:1: /);
    assert.ok(finding?.fix);
    assert.doesNotMatch(JSON.stringify(hub.report), /aaaaaaaaaaaaaaaa/, 'the token is never printed');
  } finally {
    bus.cleanup();
  }
});

test('doctor: a session whose process is gone, and a brain its sessions do not subscribe to, are warnings with a fix', () => {
  const bus = tempBus();
  try {
    assert.equal(runCli(['send', 'hello', '--to', 'me', '--name', 'me'], { env: bus.env }).code, 0);
    bus.sql(
      `INSERT INTO sessions (server_pid, server_started, name, client_address, repo_path, lineage, started_at, last_seen)
       VALUES (999999, 'gone', 'shop/claude-1', 'shop/claude', '/repos/shop', 'l', '2026-01-01T00:00:00.000000Z', '2026-01-01T00:00:00.000000Z')`,
    );
    const feed = join(bus.dir, 'feed');
    mkdirSync(feed);
    writeFileSync(join(feed, 'build.md'), '---\ntitle: the build\n---\nuse node 20\n');
    const brainEnv = { BRAIN_ENABLED: '1', BRAIN_SOURCE_PATH: feed, AGENT_BUS_CHANNELS: 'ops' };
    assert.equal(runCli(['brain', 'refresh'], { env: { ...bus.env, ...brainEnv } }).code, 0);
    const { code, report } = doctor(bus, brainEnv);
    assert.equal(code, 0, `warnings alone exit 0: ${JSON.stringify(failing(report))}`);
    const sessions = report.checks.find((finding) => finding.check === 'sessions');
    assert.equal(sessions?.level, 'warn');
    assert.match(sessions?.detail ?? '', /1 session\(s\) not ended whose process is gone \(shop\/claude-1\)/);
    assert.ok(sessions?.fix);
    const brain = report.checks.find((finding) => finding.check === 'brain');
    assert.equal(brain?.level, 'warn');
    assert.match(brain?.detail ?? '', /'brain' is not in this session's subscriptions/);
    // Subscribed, the brain is fine.
    const subscribed = doctor(bus, { ...brainEnv, AGENT_BUS_CHANNELS: 'ops,brain' });
    assert.equal(subscribed.report.checks.find((finding) => finding.check === 'brain')?.level, 'ok');
  } finally {
    bus.cleanup();
  }
});

test('doctor: a client config that does not parse is a problem; a hub that answers is checked by the token it holds', async () => {
  const { bus, repo } = wiredBus();
  try {
    writeFileSync(join(repo, '.codex', 'config.toml'), '[mcp_servers.agent-bus\ncommand = ');
    const broken = doctor(bus);
    assert.equal(broken.code, 1);
    const codex = failing(broken.report).find((finding) => finding.check === 'wiring' && finding.detail.startsWith('shop/codex'));
    assert.match(codex?.detail ?? '', /config\.toml/, JSON.stringify(failing(broken.report)));
    assert.match(codex?.fix ?? '', /^fix the file by hand, then agent-bus init --clients codex /);
    const hub = await startHub(bus);
    try {
      const { token } = createToken(bus, 'shop/claude');
      const remote = doctor(bus, { AGENT_BUS_URL: hub.url, AGENT_BUS_TOKEN: token });
      const finding = remote.report.checks.find((item) => item.check === 'hub');
      assert.equal(finding?.level, 'ok', JSON.stringify(finding));
      assert.match(finding?.detail ?? '', /answers; this machine speaks as shop\/claude$/);
      assert.ok(!JSON.stringify(remote.report).includes(token.slice('abt_'.length + 16 + 1)), 'the token is never printed');
    } finally {
      await hub.stop();
    }
  } finally {
    bus.cleanup();
  }
});

test('doctor: a variable named like a setting that agent-bus does not read, and a value it cannot read, are warnings naming what it uses', () => {
  const bus = tempBus();
  try {
    assert.equal(runCli(['send', 'hello', '--to', 'me', '--name', 'me'], { env: bus.env }).code, 0);
    const clean = doctor(bus);
    const settled = clean.report.checks.filter((finding) => finding.check === 'settings');
    assert.deepEqual(settled.map((finding) => finding.level), ['ok'], JSON.stringify(settled));
    assert.match(settled[0]?.detail ?? '', /^AGENT_BUS_AUDIT_LOG, AGENT_BUS_DB, (AGENT_BUS_HOME, )?NO_COLOR set, each read as written$/);
    const { code, report, text } = doctor(bus, {
      AGENT_BUS_HTTP_RAT: '5',
      AGENT_BUS_TOKNE: 'abt_0123456789abcdef_secretsecretsecret',
      AGENT_BUS_WATCH_POLL_SECONDS: 'soon',
      AGENT_BUS_NOTICE_MAX_BYTES: '10',
      BRAIN_ENABLED: 'maybe',
      // Read as written, or given by agent-bus to a wake command: nothing to say.
      AGENT_BUS_HTTP_RATE: '7',
      AGENT_BUS_FROM: 'shop/claude',
    });
    assert.equal(code, 0, `warnings alone exit 0: ${JSON.stringify(failing(report))}`);
    const warnings = report.checks.filter((finding) => finding.check === 'settings');
    assert.ok(warnings.every((finding) => finding.level === 'warn' && finding.fix && !finding.fix.includes('\n')), JSON.stringify(warnings));
    const about = (name: string): Finding | undefined => warnings.find((finding) => finding.detail.startsWith(name));
    assert.equal(about('AGENT_BUS_HTTP_RAT ')?.detail, 'AGENT_BUS_HTTP_RAT is set, but agent-bus reads no setting of that name');
    assert.match(about('AGENT_BUS_HTTP_RAT ')?.fix ?? '', /^did you mean AGENT_BUS_HTTP_RATE\?/);
    assert.match(about('AGENT_BUS_TOKNE')?.fix ?? '', /^did you mean AGENT_BUS_TOKEN\?/);
    assert.equal(about('AGENT_BUS_WATCH_POLL_SECONDS')?.detail, "AGENT_BUS_WATCH_POLL_SECONDS='soon' is not a number: the default 2 is used");
    assert.equal(about('AGENT_BUS_NOTICE_MAX_BYTES')?.detail, "AGENT_BUS_NOTICE_MAX_BYTES='10' is below 1000: 1000 is used");
    assert.match(about('BRAIN_ENABLED')?.detail ?? '', /^BRAIN_ENABLED='maybe' is neither on \(1, true, yes, on\) nor off \(0, false, no, off\): it is taken as off$/);
    assert.equal(warnings.length, 5, JSON.stringify(warnings));
    assert.doesNotMatch(JSON.stringify(report) + text, /secretsecret/, "a variable's value is shown only when it is a setting's that cannot be read");
    assert.match(text, /^warn {2}settings: AGENT_BUS_HTTP_RAT is set, but agent-bus reads no setting of that name\n {8}fix: did you mean AGENT_BUS_HTTP_RATE\?/m);
    assert.match(text, /all is well \(\d+ warnings\)/);
  } finally {
    bus.cleanup();
  }
});

test("doctor: a repo an older init wired, with this machine's paths in its committed files, is named with the fix", () => {
  const { bus, repo, bin } = wiredBus();
  try {
    const mcpPath = join(repo, '.mcp.json');
    const mcp = JSON.parse(readFileSync(mcpPath, 'utf8')) as { mcpServers: Record<string, Record<string, unknown>> };
    mcp.mcpServers['agent-bus'] = { ...mcp.mcpServers['agent-bus'], command: bin, args: ['serve'], env: { AGENT_BUS_NAME: 'shop/claude', AGENT_BUS_REPO: repo } };
    writeFileSync(mcpPath, JSON.stringify(mcp));
    const { code, report } = doctor(bus);
    assert.equal(code, 1);
    const claude = failing(report).find((finding) => finding.check === 'wiring' && finding.detail.startsWith('shop/claude'));
    assert.equal(claude?.detail, `shop/claude (claude in ${repo}): written by an older init, with this machine's paths in files the team commits`);
    assert.equal(claude?.fix, `agent-bus init --clients claude ${repo}`);
    assert.equal(runCli(['init', '--clients', 'claude', repo], { env: bus.env, cwd: repo }).code, 0);
    assert.equal(doctor(bus).code, 0, 'the fix fixes it');
  } finally {
    bus.cleanup();
  }
});
