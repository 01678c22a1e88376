/**
 * File reservations through the CLI, the MCP server (stdio, through the official SDK) and a hub,
 * on a real bus: conflicts name the holder, several paths are all or none, release, and the audit.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { json, readAudit, runCli, runCliAsync, tempBus, withTempBus, type TempBus, messageLines } from '../helpers/bus-env.js';
import { connect } from '../helpers/mcp.js';
import { connectHttp, createToken, withHub } from '../helpers/hub.js';
import { waitForExit } from '../helpers/wait.js';
import { repoIn, type Reservation } from '../helpers/reservations.js';


test('CLI: reserve, a refusal naming holder, path, until and reason with nothing reserved, list, release, and the audit', withTempBus(async (bus) => {
  const root = repoIn(bus);
  const reserved = runCli(['reserve', 'src/auth.ts', `${root}/docs/`, '--reason', 'rewriting login', '--name', 'shop/claude', '--json'], { env: bus.env, cwd: join(root, 'src') });
  assert.equal(reserved.code, 0, reserved.stderr);
  const mine = json<{ reserved: Reservation[] }>(reserved).reserved;
  assert.deepEqual(mine.map((row) => [row.repo, row.holder, row.path, row.mode, row.reason]), [
    ['shop', 'shop/claude', 'src/auth.ts', 'exclusive', 'rewriting login'],
    ['shop', 'shop/claude', 'docs/**', 'exclusive', 'rewriting login'],
  ]);
  const refused = runCli(['reserve', 'README.md', 'src/*.ts', '--name', 'shop/codex'], { env: bus.env, cwd: root });
  assert.equal(refused.code, 1);
  assert.equal(refused.stdout, '');
  assert.match(refused.stderr, /^agent-bus: 'src\/auth\.ts' is reserved by shop\/claude for another \d+ (?:min|h) \(rewriting login\), which overlaps 'src\/\*\.ts': nothing was reserved\n$/);
  const listed = runCli(['reservations', '--json'], { env: bus.env, cwd: root });
  assert.deepEqual(json<{ reservations: Reservation[] }>(listed).reservations.map((row) => row.path), ['src/auth.ts', 'docs/**'], 'README.md was not reserved');
  const text = runCli(['reservations'], { env: bus.env, cwd: root });
  assert.match(text.stdout, /^shop\/claude {2}src\/auth\.ts {2}exclusive {2}since just now, expires in 1 h {2}\(rewriting login\) {2}\[shop\]$/m);
  // Outside the repo, through .., or nothing at all: one line, exit non-zero, nothing reserved.
  for (const [bad, expected] of [
    [['reserve', '../etc/passwd'], /leaves the repo through '\.\.'/],
    [['reserve', '/etc/passwd'], /is outside the repo/],
    [['reserve', 'a.ts', '--ttl', '25h'], /24 hours at the most/],
    [['reserve', 'a.ts', '--ttl', 'soon'], /bad duration 'soon'/],
  ] as const) {
    const result = runCli([...bad], { env: bus.env, cwd: root });
    assert.notEqual(result.code, 0, bad.join(' '));
    assert.match(result.stderr, expected);
    assert.equal(messageLines(result.stderr).length, 1);
  }
  const missing = runCli(['reserve'], { env: bus.env, cwd: root });
  assert.equal(missing.code, 2);
  assert.equal(json<{ reservations: Reservation[] }>(runCli(['reservations', '--json'], { env: bus.env })).reservations.length, 2);
  // The holder releases a path; a person releases the rest of another's.
  const released = runCli(['release', 'docs/', '--name', 'shop/claude', '--json'], { env: bus.env, cwd: root });
  assert.deepEqual(json<{ released: Reservation[] }>(released).released.map((row) => row.path), ['docs/**']);
  const byPerson = runCli(['release', '--holder', 'shop/claude', '--all'], { env: bus.env, cwd: root });
  assert.match(byPerson.stdout, /^released:\nshop\/claude {2}src\/auth\.ts {2}exclusive/);
  assert.equal(runCli(['reservations'], { env: bus.env }).stdout, '(no live reservations)\n');
  assert.equal(runCli(['reserve', 'src/*.ts', '--name', 'shop/codex'], { env: bus.env, cwd: root }).code, 0, 'free now');
  const rows = readAudit(bus.audit).filter((row) => ['reserve', 'release'].includes(String(row.op)));
  assert.deepEqual(
    rows.map((row) => [row.op, row.actor, row.body_preview]),
    [
      ['reserve', 'shop/claude', 'src/auth.ts'],
      ['reserve', 'shop/claude', 'docs/**'],
      ['release', 'shop/claude', 'docs/**'],
      ['release', 'human', 'src/auth.ts'],
      ['reserve', 'shop/codex', 'src/*.ts'],
    ],
  );
  const tail = runCli(['tail', '--limit', '1'], { env: bus.env });
  assert.match(tail.stdout, /reserve/);
}));

test('MCP: reserve_files, list_reservations and release_files; a second agent is refused with the holder named; a session holds as its session address', withTempBus(async (bus) => {
  const root = repoIn(bus);
  const claude = await connect({ ...bus.env, AGENT_BUS_CLIENT: 'claude' }, { cwd: root });
  const codex = await connect({ ...bus.env, AGENT_BUS_CLIENT: 'codex' }, { cwd: root });
  try {
    const who = await claude.call<{ name: string }>('whoami');
    assert.match(claude.client.getInstructions() ?? '', /Before a large edit, reserve_files\(paths\) so other agents' edits of those files are refused/);
    const { reserved } = await claude.call<{ reserved: Reservation[] }>('reserve_files', { paths: [`${root}/src/auth.ts`], reason: 'login', ttl: '30m' });
    assert.deepEqual(reserved.map((row) => [row.holder, row.path, row.mode]), [[who.name, 'src/auth.ts', 'exclusive']]);
    const refusal = await codex.fails('reserve_files', { paths: ['src/**'] });
    assert.match(refusal, new RegExp(`'src/auth\\.ts' is reserved by ${who.name.replace(/[/.-]/g, '\\$&')} for another \\d+ (?:s|min|h) \\(login\\), which overlaps 'src/\\*\\*': nothing was reserved`));
    await codex.call('reserve_files', { paths: ['README.md'], shared: true });
    const { reservations } = await codex.call<{ reservations: Reservation[] }>('list_reservations');
    assert.deepEqual(reservations.map((row) => row.path), ['src/auth.ts', 'README.md']);
    const { released } = await claude.call<{ released: Reservation[] }>('release_files', {});
    assert.deepEqual(released.map((row) => row.path), ['src/auth.ts']);
    assert.deepEqual((await codex.call<{ reserved: Reservation[] }>('reserve_files', { paths: ['src/**'] })).reserved.map((row) => row.path), ['src/**']);
  } finally {
    await claude.close();
    await codex.close();
  }
}));

test("over the hub: a token reserves as its own agent through the tools and the remote CLI, and cannot release another's", withHub({}, async (bus, hub) => {
  const { token } = createToken(bus, 'shop/claude');
  const other = createToken(bus, 'shop/codex');
  const remote = tempBus({ AGENT_BUS_URL: hub.url, AGENT_BUS_TOKEN: token });
  try {
    const root = repoIn(remote);
    const reserved = runCli(['reserve', `${root}/src/auth.ts`, '--json'], { env: remote.env, cwd: root });
    assert.equal(reserved.code, 0, reserved.stderr);
    assert.deepEqual(json<{ reserved: Reservation[] }>(reserved).reserved.map((row) => [row.holder, row.repo, row.path]), [['shop/claude', 'shop', 'src/auth.ts']]);
    const codex = await connectHttp(hub.url, other.token);
    try {
      const refused = await codex.call('reserve_files', { paths: ['src/auth.ts'] });
      assert.equal(refused.isError, true);
      assert.match(refused.text, /reserved by shop\/claude/);
    } finally {
      await codex.close();
    }
    const notMine = runCli(['release', '--holder', 'shop/codex', '--all'], { env: remote.env, cwd: root });
    assert.equal(notMine.code, 1);
    assert.match(notMine.stderr, /over the hub a token releases only its own agent's reservations/);
    const listed = runCli(['reservations', '--json'], { env: remote.env, cwd: root });
    assert.deepEqual(json<{ reservations: Reservation[] }>(listed).reservations.map((row) => row.holder), ['shop/claude']);
    assert.equal(runCli(['release', 'src/auth.ts'], { env: remote.env, cwd: root }).code, 0);
    assert.equal(json<{ reservations: Reservation[] }>(runCli(['reservations', '--json'], { env: bus.env })).reservations.length, 0, "gone from the hub's bus");
  } finally {
    remote.cleanup();
  }
}));

/** An agent's pre-tool hook on a Claude Code tool call: what it printed. */
function preTool(bus: TempBus, root: string, name: string, toolName: string, toolInput: Record<string, unknown>, extra: NodeJS.ProcessEnv = {}, client = 'claude'): { stdout: string; stderr: string; code: number | null } {
  const result = runCli(['hook-pre-tool', '--client', client], {
    env: { ...bus.env, AGENT_BUS_NAME: name, AGENT_BUS_REPO: root, ...extra },
    cwd: root,
    input: JSON.stringify({ session_id: `s-${name}`, cwd: root, hook_event_name: 'PreToolUse', tool_name: toolName, tool_input: toolInput }),
  });
  assert.equal(result.code, 0, result.stderr);
  return result;
}

interface PreToolAnswer {
  hookSpecificOutput?: { hookEventName?: string; permissionDecision?: string; permissionDecisionReason?: string; additionalContext?: string };
}

test("pre-tool: another agent's exclusive reservation refuses an Edit in Claude Code's dialect, naming holder, path and the way out; warn mode tells instead; one's own is silent", withTempBus(async (bus) => {
  const root = repoIn(bus);
  assert.equal(runCli(['reserve', 'src/auth.ts', '--reason', 'rewriting login', '--name', 'shop/codex'], { env: bus.env, cwd: root }).code, 0);
  const denied = JSON.parse(preTool(bus, root, 'shop/claude', 'Edit', { file_path: `${root}/src/auth.ts`, old_string: 'a', new_string: 'b' }).stdout) as PreToolAnswer;
  assert.equal(denied.hookSpecificOutput?.hookEventName, 'PreToolUse');
  assert.equal(denied.hookSpecificOutput?.permissionDecision, 'deny');
  assert.match(denied.hookSpecificOutput?.permissionDecisionReason ?? '', /^\[agent-bus\] src\/auth\.ts is reserved by shop\/codex for another \d+ (?:s|min|h) \(rewriting login\): this edit was refused and the file is untouched\. Ask shop\/codex with send_message to release it, or work on other files\.$/);
  const denials = readAudit(bus.audit).filter((row) => row.op === 'deny');
  assert.deepEqual(denials.map((row) => [row.actor, row.to, row.body_preview, row.reserved]), [['shop/claude', 'shop/codex', 'src/auth.ts', 'src/auth.ts']]);
  // A relative path from Write, another file, a read: as the tool call names them.
  assert.equal((JSON.parse(preTool(bus, root, 'shop/claude', 'Write', { file_path: 'src/auth.ts', content: 'x' }).stdout) as PreToolAnswer).hookSpecificOutput?.permissionDecision, 'deny');
  assert.equal(preTool(bus, root, 'shop/claude', 'Edit', { file_path: `${root}/src/other.ts` }).stdout, '', 'a file nobody holds: nothing to say');
  assert.equal(preTool(bus, root, 'shop/claude', 'Read', { file_path: `${root}/src/auth.ts` }).stdout, '', 'reading is no write');
  assert.equal(preTool(bus, root, 'shop/codex', 'Edit', { file_path: `${root}/src/auth.ts` }).stdout, '', "the holder's own edit goes ahead");
  // warn: the edit goes ahead, and the model is told the same before it runs.
  const warned = JSON.parse(preTool(bus, root, 'shop/claude', 'Edit', { file_path: `${root}/src/auth.ts` }, { AGENT_BUS_RESERVATIONS: 'warn' }).stdout) as PreToolAnswer;
  assert.equal(warned.hookSpecificOutput?.permissionDecision, undefined);
  assert.match(warned.hookSpecificOutput?.additionalContext ?? '', /src\/auth\.ts is reserved by shop\/codex for another \d+ (?:s|min|h) \(rewriting login\): coordinate with shop\/codex \(send_message\) before you change it\./);
  assert.equal(preTool(bus, root, 'shop/claude', 'Edit', { file_path: `${root}/src/auth.ts` }, { AGENT_BUS_RESERVATIONS: 'off' }).stdout.includes('reserved'), false, 'off: no check');
  // A shared reservation only ever warns.
  assert.equal(runCli(['reserve', 'README.md', '--shared', '--name', 'shop/codex'], { env: bus.env, cwd: root }).code, 0);
  const shared = JSON.parse(preTool(bus, root, 'shop/claude', 'Write', { file_path: `${root}/README.md` }).stdout) as PreToolAnswer;
  assert.equal(shared.hookSpecificOutput?.permissionDecision, undefined);
  assert.match(shared.hookSpecificOutput?.additionalContext ?? '', /README\.md is reserved by shop\/codex for another \d+ (?:s|min|h), shared/);
  // Released: the same edit is let through.
  assert.equal(runCli(['release', '--all', '--name', 'shop/codex'], { env: bus.env, cwd: root }).code, 0);
  assert.doesNotMatch(preTool(bus, root, 'shop/claude', 'Edit', { file_path: `${root}/src/auth.ts` }).stdout, /deny|reserved/);
}));

test("pre-tool: Codex's apply_patch is refused for a reserved file named in the patch", withTempBus(async (bus) => {
  const root = repoIn(bus);
  assert.equal(runCli(['reserve', 'src/**', '--name', 'shop/claude'], { env: bus.env, cwd: root }).code, 0);
  const patch = ['*** Begin Patch', '*** Update File: src/auth.ts', '@@', '-a', '+b', '*** End Patch'].join('\n');
  const answer = JSON.parse(preTool(bus, root, 'shop/codex', 'apply_patch', { command: patch }, {}, 'codex').stdout) as PreToolAnswer;
  assert.equal(answer.hookSpecificOutput?.permissionDecision, 'deny');
  assert.match(answer.hookSpecificOutput?.permissionDecisionReason ?? '', /src\/auth\.ts is reserved by shop\/claude/);
  const elsewhere = ['*** Begin Patch', '*** Add File: docs/new.md', '+hello', '*** End Patch'].join('\n');
  assert.equal(preTool(bus, root, 'shop/codex', 'apply_patch', { command: elsewhere }, {}, 'codex').stdout, '');
}));

test("pre-tool: Codex's shell running apply_patch on a patch (what Codex applies as one, reported to hooks as Bash) is refused for a reserved file in it", withTempBus(async (bus) => {
  const root = repoIn(bus);
  assert.equal(runCli(['reserve', 'src/auth.ts', '--name', 'shop/claude'], { env: bus.env, cwd: root }).code, 0);
  const patch = ['*** Begin Patch', '*** Update File: auth.ts', '@@', '-a', '+b', '*** End Patch'].join('\n');
  for (const command of [`cd src && apply_patch <<'EOF'\n${patch}\nEOF\n`, `printf '%s' '${patch.replace('auth.ts', 'src/auth.ts')}' | apply_patch`]) {
    const answer = JSON.parse(preTool(bus, root, 'shop/codex', 'Bash', { command }, {}, 'codex').stdout || '{}') as PreToolAnswer;
    assert.equal(answer.hookSpecificOutput?.permissionDecision, 'deny', command);
    assert.match(answer.hookSpecificOutput?.permissionDecisionReason ?? '', /src\/auth\.ts is reserved by shop\/claude/);
  }
  // A shell command that runs no patch, or a patch of another file, goes ahead.
  assert.equal(preTool(bus, root, 'shop/codex', 'Bash', { command: `cat <<'EOF'\n${patch}\nEOF\n` }, {}, 'codex').stdout, '');
  assert.equal(preTool(bus, root, 'shop/codex', 'Bash', { command: `apply_patch <<'EOF'\n${patch}\nEOF\n` }, {}, 'codex').stdout, '', 'auth.ts at the root is not src/auth.ts');
  assert.equal(readAudit(bus.audit).filter((row) => row.op === 'deny').length, 2);
}));

test("pre-tool: a shell command that writes another agent's reserved file is refused as an edit is, naming holder and reason; one that cannot be read, or writes elsewhere, goes ahead", withTempBus(async (bus) => {
  const root = repoIn(bus);
  writeFileSync(join(root, 'src', 'auth.ts'), 'a');
  assert.equal(runCli(['reserve', 'src/auth.ts', '--reason', 'rewriting login', '--name', 'shop/codex'], { env: bus.env, cwd: root }).code, 0);
  const shell = (command: string, client = 'claude', name = 'shop/claude', extra: NodeJS.ProcessEnv = {}): PreToolAnswer | null => {
    const { stdout } = preTool(bus, root, name, 'Bash', { command }, extra, client);
    return stdout === '' ? null : (JSON.parse(stdout) as PreToolAnswer);
  };
  const refusing = [
    'echo x > src/auth.ts',
    'npm run gen 2>> src/auth.ts',
    "cd src && sed -i 's/a/b/' auth.ts",
    "bash -c 'cp README.md src/auth.ts'",
    'cat src/auth.ts | tee -a src/auth.ts',
    'git checkout -- src/auth.ts',
    '(cd src; rm -f auth.ts)',
    "cat > src/auth.ts <<'EOF'\nexport const a = 'b';\nEOF",
  ];
  for (const command of refusing) {
    const answer = shell(command);
    assert.equal(answer?.hookSpecificOutput?.permissionDecision, 'deny', command);
    assert.match(answer?.hookSpecificOutput?.permissionDecisionReason ?? '', /^\[agent-bus\] src\/auth\.ts is reserved by shop\/codex for another \d+ (?:s|min|h) \(rewriting login\): this edit was refused and the file is untouched\. Ask shop\/codex with send_message to release it, or work on other files\.$/, command);
  }
  // Codex's shell tool, which its hooks name Bash, the same.
  assert.equal(runCli(['reserve', 'src/db.ts', '--name', 'shop/claude'], { env: bus.env, cwd: root }).code, 0);
  assert.match(shell('rm src/db.ts', 'codex', 'shop/codex')?.hookSpecificOutput?.permissionDecisionReason ?? '', /src\/db\.ts is reserved by shop\/claude/);
  // Reads, other files, paths outside the repo, a branch, and what cannot be read for certain go ahead.
  const allowed = [
    'cat src/auth.ts',
    '(cd src; cat auth.ts) > copy.txt',
    'cat src/auth.ts > /dev/null',
    `cp src/auth.ts ${join(bus.dir, 'outside.ts')}`,
    'git checkout main',
    `python -c "open('src/auth.ts','w').write('x')"`,
    'echo x > $TARGET',
    "echo 'unterminated > src/auth.ts",
  ];
  for (const command of allowed) assert.equal(shell(command), null, command);
  assert.deepEqual(readAudit(bus.audit).filter((row) => row.op === 'deny').map((row) => row.reserved), [...refusing.map(() => 'src/auth.ts'), 'src/db.ts']);
  // warn: the command goes ahead, and the model is told who holds the file.
  const warned = shell('echo x >> src/auth.ts', 'claude', 'shop/claude', { AGENT_BUS_RESERVATIONS: 'warn' });
  assert.equal(warned?.hookSpecificOutput?.permissionDecision, undefined);
  assert.match(warned?.hookSpecificOutput?.additionalContext ?? '', /src\/auth\.ts is reserved by shop\/codex .*coordinate with shop\/codex/);
  assert.equal(readFileSync(join(root, 'src', 'auth.ts'), 'utf8'), 'a', 'the hook itself runs nothing');
}));

test('pre-tool: two agents writing one file within the window are both alerted, once per pair and file', withTempBus(async (bus) => {
  const root = repoIn(bus);
  for (const name of ['shop/claude', 'shop/codex']) {
    assert.equal(runCli(['send', 'joining', '--to', name, '--name', name], { env: bus.env }).code, 0);
    assert.equal(runCli(['inbox', '--name', name], { env: bus.env }).code, 0);
  }
  assert.equal(preTool(bus, root, 'shop/claude', 'Edit', { file_path: `${root}/src/shared.ts` }).stdout, '', 'the first write alone is no collision');
  const second = JSON.parse(preTool(bus, root, 'shop/codex', 'Write', { file_path: `${root}/src/shared.ts` }).stdout) as PreToolAnswer;
  assert.match(second.hookSpecificOutput?.additionalContext ?? '', /^\[agent-bus\] shop\/claude wrote src\/shared\.ts \d+ s ago: you are both editing it; coordinate with send_message\.$/m);
  const mail = json<Array<{ from: string; body: string }>>(runCli(['inbox', '--name', 'shop/claude', '--json'], { env: bus.env }));
  assert.deepEqual(mail.map((message) => message.from), ['agent-bus']);
  assert.match(mail[0]?.body ?? '', /^\[agent-bus\] shop\/codex is writing src\/shared\.ts too \(you wrote it \d+ s ago\)/);
  assert.equal(preTool(bus, root, 'shop/codex', 'Write', { file_path: `${root}/src/shared.ts` }).stdout, '', 'no nagging within the window');
  assert.equal(readAudit(bus.audit).filter((row) => row.op === 'collision').length, 1);
}));

test("over the hub: the remote pre-tool hook sends the repo's files its call writes, and the hub refuses another's reserved one as the token's agent", withHub({}, async (bus, hub) => {
  const { token } = createToken(bus, 'shop/claude');
  const codex = createToken(bus, 'shop/codex');
  const remote = tempBus({ AGENT_BUS_URL: hub.url, AGENT_BUS_TOKEN: token });
  try {
    const root = repoIn(remote);
    const held = runCli(['reserve', 'src/auth.ts', '--reason', 'rewriting login', '--json'], { env: { ...remote.env, AGENT_BUS_TOKEN: codex.token }, cwd: root });
    assert.equal(held.code, 0, held.stderr);
    const edit = (file: string, extra: NodeJS.ProcessEnv = {}) => {
      const result = runCli(['hook-pre-tool', '--client', 'claude'], {
        env: { ...remote.env, ...extra },
        cwd: root,
        input: JSON.stringify({ session_id: 'remote-1', cwd: root, hook_event_name: 'PreToolUse', tool_name: 'Edit', tool_input: { file_path: file, old_string: 'a', new_string: 'b' } }),
      });
      assert.equal(result.code, 0, result.stderr);
      return result.stdout === '' ? null : (JSON.parse(result.stdout) as PreToolAnswer);
    };
    const denied = edit(`${root}/src/auth.ts`);
    assert.equal(denied?.hookSpecificOutput?.permissionDecision, 'deny');
    assert.match(denied?.hookSpecificOutput?.permissionDecisionReason ?? '', /src\/auth\.ts is reserved by shop\/codex for another \d+ (?:s|min|h) \(rewriting login\)/);
    // Audited on the hub, as the token's agent's session that asked.
    const denials = readAudit(bus.audit).filter((row) => row.op === 'deny');
    assert.equal(denials.length, 1);
    assert.match(String(denials[0]?.actor), /^shop\/claude-\d+$/);
    assert.equal(denials[0]?.to, 'shop/codex');
    assert.equal(edit(`${root}/src/auth.ts`, { AGENT_BUS_RESERVATIONS: 'warn' })?.hookSpecificOutput?.permissionDecision, undefined, "warn is the agent's machine's setting");
    assert.equal(edit(`${root}/src/other.ts`), null, 'a file nobody holds');
    // The hub takes repo-relative paths only.
    const refused = await fetch(`${hub.url}/v1/hook`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ kind: 'pre-tool', client: 'claude', writes: { files: ['../elsewhere.ts'], mode: 'deny' } }),
    });
    assert.equal(refused.status, 400);
    assert.match(await refused.text(), /writes\.files: each must be a path relative to the repo's root/);
    assert.equal(runCli(['release', '--all'], { env: { ...remote.env, AGENT_BUS_TOKEN: codex.token }, cwd: root }).code, 0);
    assert.equal(edit(`${root}/src/auth.ts`), null, 'released: the edit goes ahead');
  } finally {
    remote.cleanup();
  }
}));

test("'agent-bus' is the bus's own name: no one sends, serves or gets a token as it", withTempBus(async (bus) => {
  const sent = runCli(['send', 'hello', '--to', 'shop/claude', '--name', 'agent-bus'], { env: bus.env });
  assert.equal(sent.code, 2, sent.stderr);
  assert.match(sent.stderr, /'agent-bus' is the bus's own name/);
  const asEnv = runCli(['send', 'hello', '--to', 'shop/claude'], { env: { ...bus.env, AGENT_BUS_NAME: 'agent-bus' } });
  assert.notEqual(asEnv.code, 0);
  assert.match(asEnv.stderr, /'agent-bus' is the bus's own name/);
  const token = runCli(['token', 'create', 'agent-bus'], { env: bus.env });
  assert.notEqual(token.code, 0);
  assert.match(token.stderr, /'agent-bus' is the bus's own name/);
  assert.equal(json<unknown[]>(runCli(['inbox', '--name', 'shop/claude', '--json'], { env: bus.env })).length, 0, 'nothing was sent');
  const served = runCli(['serve'], { env: { ...bus.env, AGENT_BUS_NAME: 'agent-bus' }, input: '' });
  assert.notEqual(served.code, 0);
  assert.match(served.stderr, /AGENT_BUS_NAME: 'agent-bus' is the bus's own name/);
}));

test("a session's reservation ends when its process is killed: another agent then reserves the file, and the end is audited as expire", withTempBus(async (bus) => {
  const root = repoIn(bus);
  const claude = await connect({ ...bus.env, AGENT_BUS_CLIENT: 'claude' }, { cwd: root });
  const codex = await connect({ ...bus.env, AGENT_BUS_CLIENT: 'codex' }, { cwd: root });
  try {
    const who = await claude.call<{ name: string }>('whoami');
    await claude.call('reserve_files', { paths: ['src/auth.ts'], reason: 'login' });
    assert.match(await codex.fails('reserve_files', { paths: ['src/auth.ts'] }), /is reserved by/, 'held while its session runs');
    const pid = claude.pid();
    assert.ok(pid !== null);
    process.kill(pid, 'SIGKILL');
    await waitForExit(pid, 'the killed server to be gone');
    const { reserved } = await codex.call<{ reserved: Reservation[] }>('reserve_files', { paths: ['src/auth.ts'] });
    assert.equal(reserved.length, 1, "the crashed session's hold is gone");
    const ended = readAudit(bus.audit).filter((row) => row.op === 'expire');
    assert.deepEqual(ended.map((row) => row.from), [who.name]);
  } finally {
    await claude.close().catch(() => undefined);
    await codex.close();
  }
}));

test("agy, whose hooks are not told which file a call writes, is told at each prompt which files others hold", withTempBus(async (bus) => {
  const root = repoIn(bus);
  const prompt = (client: string) => {
    const result = runCli(['hook-user-prompt', '--client', client], {
      env: { ...bus.env, AGENT_BUS_NAME: `shop/${client}`, AGENT_BUS_REPO: root },
      cwd: root,
      input: JSON.stringify({ session_id: `s-${client}`, cwd: root }),
    });
    assert.equal(result.code, 0, result.stderr);
    return result.stdout;
  };
  assert.equal(JSON.stringify(JSON.parse(prompt('agy'))), JSON.stringify({ injectSteps: [] }), 'nothing held: nothing said');
  assert.equal(runCli(['reserve', 'src/auth.ts', '--reason', 'rewriting login', '--name', 'shop/claude'], { env: bus.env, cwd: root }).code, 0);
  assert.equal(runCli(['reserve', 'docs/', '--shared', '--name', 'shop/claude'], { env: bus.env, cwd: root }).code, 0);
  const told = JSON.parse(prompt('agy')) as { injectSteps: Array<{ ephemeralMessage: string }> };
  const text = told.injectSteps.map((step) => step.ephemeralMessage).join('\n');
  assert.match(text, /^\[agent-bus\] Files other agents have reserved in this repo: do not edit them; ask the holder with send_message\.\n {2}src\/auth\.ts — shop\/claude for another \d+ (?:s|min|h) \(rewriting login\)$/);
  assert.doesNotMatch(text, /docs\//, 'a shared hold is no bar');
  assert.doesNotMatch(prompt('claude'), /reserved/, "Claude Code's writes are checked at the tool call instead");
  const off = runCli(['hook-user-prompt', '--client', 'agy'], { env: { ...bus.env, AGENT_BUS_NAME: 'shop/agy', AGENT_BUS_REPO: root, AGENT_BUS_RESERVATIONS: 'off' }, cwd: root, input: '{}' });
  assert.doesNotMatch(off.stdout, /reserved/);
}));

test('eight processes racing for one path and for a glob over it: exactly one wins, the others are told who holds it', withTempBus(async (bus) => {
  const root = repoIn(bus);
  const racers = Array.from({ length: 8 }, (_, index) => `shop/agent-${index + 1}`);
  const outcomes = await Promise.all(
    racers.map((name, index) => runCliAsync(['reserve', index % 2 === 0 ? 'src/contested.ts' : 'src/*.ts', '--name', name, '--json'], { env: bus.env, cwd: root })),
  );
  const winners = outcomes.filter((outcome) => outcome.code === 0);
  assert.equal(winners.length, 1, outcomes.map((outcome) => outcome.stderr).join(''));
  const holder = json<{ reserved: Reservation[] }>(winners[0] as { code: number | null; stdout: string; stderr: string }).reserved[0]?.holder;
  for (const lost of outcomes.filter((outcome) => outcome.code !== 0)) {
    assert.equal(lost.code, 1);
    assert.match(lost.stderr, new RegExp(`is reserved by ${String(holder).replace(/[/.-]/g, '\\$&')} for another`));
  }
  assert.deepEqual(json<{ reservations: Reservation[] }>(runCli(['reservations', '--json'], { env: bus.env })).reservations.map((row) => row.holder), [holder]);
}));

test('a reason is one line of at most 200 characters: a line break, an escape or a longer one is refused and nothing is reserved', withTempBus((bus) => {
  const root = repoIn(bus);
  for (const [reason, said] of [
    ['first line\nsecond line', /a reason is one line of text: no line breaks or control characters/],
    ['\u001b]0;title\u0007', /a reason is one line of text/],
    ['x'.repeat(201), /a reason is at most 200 characters/],
  ] as const) {
    const refused = runCli(['reserve', 'src/auth.ts', '--reason', reason, '--name', 'shop/claude'], { env: bus.env, cwd: root });
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, said);
    assert.equal(messageLines(refused.stderr).length, 1, 'one line');
  }
  assert.equal(json<{ reservations: Reservation[] }>(runCli(['reservations', '--json'], { env: bus.env })).reservations.length, 0);
  assert.equal(runCli(['reserve', 'src/auth.ts', '--reason', `${'é'.repeat(200)}`, '--name', 'shop/claude'], { env: bus.env, cwd: root }).code, 0, '200 characters, counted as characters');
}));
