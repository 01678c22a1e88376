/** The brain's refresh cadence: counted in turns by the prompt hook where a client has no pre-tool event (agy), once a tool call where it has two (Gemini CLI). */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { json, runCli, withTempBus, type TempBus } from '../helpers/bus-env.js';
import type { BrainStatus } from '../../src/brain/status.js';

function feed(bus: TempBus, files: Record<string, string>): void {
  const folder = join(bus.folder, 'brain-feed');
  mkdirSync(folder, { recursive: true });
  for (const [name, text] of Object.entries(files)) writeFileSync(join(folder, name), text);
}

test('agy: every BRAIN_REFRESH_TOOL_CALLS turns the prompt hook reads the source again', withTempBus((bus) => {
  feed(bus, { 'first.md': 'FIRST-ENTRY\n' });
  const env = { ...bus.env, AGENT_BUS_NAME: 'shop/agy', AGENT_BUS_REPO: bus.dir, AGENT_BUS_CHANNELS: 'brain', BRAIN_REFRESH_TOOL_CALLS: '2' };
  const turn = (): string => {
    const run = runCli(['hook-user-prompt', '--client', 'agy'], { env, input: JSON.stringify({ session_id: 'agy-1' }) });
    assert.equal(run.code, 0, run.stderr);
    return run.stdout;
  };
  const status = (): BrainStatus => json<BrainStatus>(runCli(['brain', 'status', '--json'], { env }));
  assert.doesNotMatch(turn(), /FIRST-ENTRY/, 'turn 1: not due yet');
  assert.equal(status().last_fetch_at, null);
  assert.match(turn(), /FIRST-ENTRY/, 'turn 2: read and shown');
  const fetched = status().last_fetch_at;
  assert.ok(fetched !== null);
  feed(bus, { 'second.md': 'SECOND-ENTRY\n' });
  assert.doesNotMatch(turn(), /SECOND-ENTRY/, 'turn 3: not due');
  assert.equal(status().last_fetch_at, fetched);
  assert.match(turn(), /SECOND-ENTRY/, 'turn 4: read again');
  // Claude Code has a pre-tool event: its prompt hook never counts.
  const claude = { ...env, AGENT_BUS_NAME: 'shop/claude' };
  for (let index = 0; index < 3; index++) runCli(['hook-user-prompt', '--client', 'claude'], { env: claude, input: JSON.stringify({ session_id: 'cc-1' }) });
  assert.equal(status().last_fetch_at === fetched, false, 'sanity: agy refreshed at turn 4');
  const afterClaude = status().last_fetch_at;
  for (let index = 0; index < 3; index++) runCli(['hook-user-prompt', '--client', 'claude'], { env: claude, input: JSON.stringify({ session_id: 'cc-1' }) });
  assert.equal(status().last_fetch_at, afterClaude, 'prompts of a client with a pre-tool event never read the source');
}));

test('an unknown BRAIN_SOURCE_TYPE is an unavailable source, said plainly', withTempBus((bus) => {
  feed(bus, { 'entry.md': 'ENTRY\n' });
  const env = { ...bus.env, BRAIN_SOURCE_TYPE: 'mcp' };
  const refresh = runCli(['brain', 'refresh', '--json'], { env });
  assert.equal(refresh.code, 1);
  assert.match((JSON.parse(refresh.stdout) as { error: string }).error, /BRAIN_SOURCE_TYPE=mcp is not a source agent-bus knows/);
  const status = json<BrainStatus>(runCli(['brain', 'status', '--json'], { env }));
  assert.equal(status.enabled, false, 'and it does not turn the brain on');
}));

test('Gemini CLI: its pre-tool hook runs before and after each call, and the call counts once, after it, where the brain it reads is shown', withTempBus((bus) => {
  feed(bus, { 'first.md': 'GEMINI-ENTRY\n' });
  const env = { ...bus.env, AGENT_BUS_NAME: 'shop/gemini', AGENT_BUS_REPO: bus.dir, AGENT_BUS_CHANNELS: 'brain', BRAIN_REFRESH_TOOL_CALLS: '2' };
  const hook = (event: string): string => {
    const run = runCli(['hook-pre-tool', '--client', 'gemini'], { env, input: JSON.stringify({ session_id: 'g-1', hook_event_name: event, tool_name: 'read_file', tool_input: { file_path: 'a' } }) });
    assert.equal(run.code, 0, run.stderr);
    return run.stdout;
  };
  const status = (): BrainStatus => json<BrainStatus>(runCli(['brain', 'status', '--json'], { env }));
  for (let call = 1; call <= 2; call++) assert.equal(hook('BeforeTool'), '', `call ${call}: nothing before it`);
  assert.equal(status().last_fetch_at, null, 'the checks before the calls count nothing');
  assert.doesNotMatch(hook('AfterTool'), /GEMINI-ENTRY/, 'call 1: not due yet');
  assert.match(hook('AfterTool'), /GEMINI-ENTRY/, 'call 2: read, and shown with its result');
  assert.ok(status().last_fetch_at !== null);
}));
