/** The MCP server's tools exist once: the list init pre-approves is the list a running server registers. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { HOOK_TOOL, TOOL_NAMES } from '../../src/protocol/tool-names.js';
import { tempBus } from '../helpers/bus-env.js';
import { connect } from '../helpers/mcp.js';

test('a running server registers exactly the tools of TOOL_NAMES, and the hook tool its client\'s hooks call', async () => {
  const bus = tempBus();
  const session = await connect({ ...bus.env, AGENT_BUS_NAME: 'shop/claude', AGENT_BUS_REPO: bus.dir });
  try {
    const { tools } = await session.client.listTools();
    assert.ok(tools.some((tool) => tool.name === HOOK_TOOL && /a model must never call it/.test(tool.description ?? '')), 'the hook tool, described as the hooks\' own');
    const registered = tools.map((tool) => tool.name).filter((name) => name !== HOOK_TOOL);
    assert.ok(registered.length > 0, `the server listed its tools: ${session.stderr()}`);
    const listed = new Set<string>(TOOL_NAMES);
    assert.deepEqual(registered.filter((name) => !listed.has(name)), [], 'tools the server registers that TOOL_NAMES lacks');
    assert.deepEqual(TOOL_NAMES.filter((name) => !registered.includes(name)), [], 'names in TOOL_NAMES the server does not register');
    assert.equal(new Set(TOOL_NAMES).size, TOOL_NAMES.length, 'each name once');
  } finally {
    await session.close();
    bus.cleanup();
  }
});
