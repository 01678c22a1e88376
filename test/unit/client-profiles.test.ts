/** Each client is one folder under src/clients/, and every reader finds it through the registries. */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { UNKNOWN_CLIENT, sessionFromEnvironment } from '../../src/clients/profile.js';
import { clientInEnvironment, environmentSessionKey, PROFILES, profileFor, queueWakeOf, QUEUE_WOKEN } from '../../src/clients/registry/profiles.js';
import { approvedToolNames, configPaths } from '../../src/clients/wiring.js';
import { wiringFor, WIRINGS } from '../../src/clients/registry/wirings.js';
import { TOOL_NAMES } from '../../src/protocol/tool-names.js';
import { findCommand } from '../../src/cli/commands.js';
import { ROOT } from '../helpers/bus-env.js';

const CLIENTS = join(ROOT, 'src', 'clients');

test('every client folder is a profile and a wiring under its name', () => {
  const folders = readdirSync(CLIENTS, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(CLIENTS, entry.name, 'profile.ts')))
    .map((entry) => entry.name)
    .sort();
  assert.ok(folders.length >= 4, folders.join(', '));
  assert.deepEqual(Object.keys(PROFILES).sort(), folders, 'the profiles registry lists each folder once');
  assert.deepEqual(Object.keys(WIRINGS).sort(), folders, 'the wirings registry lists each folder once');
  for (const folder of folders) {
    const profile = profileFor(folder);
    assert.equal(profile.id, folder);
    assert.equal(wiringFor(folder)?.profile, profile, `${folder}: its wiring is its profile's`);
    // Its files in the repo are the profile's; a client that reads its server from the user's settings alone (Cline) adds that file after them.
    const files = wiringFor(folder)?.files('/repo') ?? [];
    assert.deepEqual(files.slice(0, profile.configFiles.length), configPaths(profile, '/repo'), `${folder}: init's files in the repo are the profile's`);
    assert.ok(files.slice(profile.configFiles.length).every((path) => !path.startsWith('/repo/')), `${folder}: the files after them are outside the repo`);
  }
});

test('the profiles load no wiring: every hook loads every profile', () => {
  const importsOf = (path: string): string[] => [...readFileSync(path, 'utf8').matchAll(/^import [^;]*? from '([^']+)';$/gms)].map((match) => match[1] as string);
  // A profile, the registry and the dialect import one another, the readers of written files and two type-only modules, nothing else.
  const allowed = /^(\.\.?\/(dialect|profile|writes)\.js|\.\.\/[a-z0-9]+\/profile\.js|(\.\.\/)+model\/(settings|hooks)\.js)$/;
  const files = [...Object.keys(PROFILES).map((id) => join(id, 'profile.ts')), join('registry', 'profiles.ts'), 'profile.ts', 'dialect.ts'];
  for (const file of files) {
    const imports = importsOf(join(CLIENTS, file));
    assert.ok(imports.length > 0, `${file}: its imports were read`);
    assert.deepEqual(imports.filter((path) => !allowed.test(path)), [], `${file} imports no wiring`);
  }
});

test("a profile's facts agree with one another", () => {
  for (const profile of Object.values(PROFILES)) {
    const runsPreTool = profile.hookEvents.some(([, command]) => command === 'hook-pre-tool');
    assert.equal(profile.preToolEvent, runsPreTool, `${profile.id}: a pre-tool event is one of its hook events`);
    assert.ok(profile.hookEvents.some(([, command]) => command === 'hook-stop'), `${profile.id} runs the stop hook`);
    assert.ok(profile.configFiles.length > 0, `${profile.id} owns config files`);
  }
  assert.deepEqual(QUEUE_WOKEN, ['codex']);
  const claude = profileFor('claude');
  assert.deepEqual(approvedToolNames(claude), TOOL_NAMES.map((tool) => `mcp__agent-bus__${tool}`));
  assert.deepEqual(approvedToolNames(profileFor('codex')), [], 'Codex approves the server whole');
});

test('an unknown client keeps the common contract and none of the facts', () => {
  for (const id of ['whatever', 'constructor', '__proto__', '', null, undefined]) {
    const profile = profileFor(id);
    assert.equal(profile, UNKNOWN_CLIENT, String(id));
    assert.equal(profile.dialect.prompt('ctx'), 'ctx\n');
    assert.equal(profile.dialect.stop('why'), '{"decision":"block","reason":"why"}\n');
    assert.equal(queueWakeOf(id), null);
    assert.equal(wiringFor(String(id)), undefined);
  }
  assert.equal(UNKNOWN_CLIENT.preToolEvent, true, "an unknown client's hook-pre-tool counts tool calls, as before profiles");
  assert.equal(UNKNOWN_CLIENT.manySessionsPerProcess, false);
});

test("a session's id and settings come from the variables its client sets", () => {
  const env = { CLAUDE_CODE_SESSION_ID: ' s-1 ' };
  assert.equal(sessionFromEnvironment(profileFor('claude'), env), 's-1');
  assert.equal(sessionFromEnvironment(profileFor('codex'), env), null, 'Codex names its thread in the payload and call metadata');
  assert.equal(environmentSessionKey(env), 's-1', 'a process that does not know its client reads any');
  assert.equal(environmentSessionKey({ CLAUDE_CODE_SESSION_ID: '  ' }), null);
  assert.equal(clientInEnvironment({ CLAUDECODE: '1' })?.id, 'claude');
  assert.equal(clientInEnvironment({ CLAUDECODE: '' }), null);
});

test("init's --help names every client it can wire", () => {
  const option = findCommand('init')?.options.find((entry) => entry.name === 'clients');
  assert.ok(option, 'init has --clients');
  const named = /: (.+)$/.exec(option.description)?.[1]?.split(', ') ?? [];
  assert.deepEqual([...named].sort(), Object.keys(WIRINGS).sort());
});
