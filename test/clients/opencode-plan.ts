/** What opencode 1.x and 2 share in their scenario plans: the one plugin shows notices the same way on both. */
import assert from 'node:assert/strict';
import { json, runCli } from '../helpers/bus-env.js';
import type { ClientDriver } from './drivers.js';
import { NOTICE_MARKERS } from './harness.js';
import type { NoticePlan } from './scenarios.js';

export function opencodeNotices(driver: ClientDriver): NoticePlan {
  return {
    tools: ['channel_list'],
    shown: 'the plugin shows a critical one after each tool call and an info one at the first turn',
    check(requests, bus) {
      const agentRequests = driver.turns(requests, 'channel_list');
      assert.ok(agentRequests.length >= 2, `a tool call and the request after it (${requests.length} requests)`);
      const afterTool = agentRequests.at(-1) ?? '';
      // The request after the tool carries the critical notice twice: in the turn's text and from the pre-tool hook.
      assert.ok(afterTool.split(NOTICE_MARKERS.critical).length - 1 >= 2, 'the pre-tool hook added the critical notice after the tool call');
      assert.ok(agentRequests.every((raw) => raw.includes(NOTICE_MARKERS.info)), 'the info notice stays in the turn it was shown in');
      const listed = json<Array<{ message: string; delivered_to: number }>>(runCli(['channel', 'list', '--notices', '--json'], { env: bus.env }));
      assert.equal(listed.find((notice) => notice.message === NOTICE_MARKERS.info)?.delivered_to, 1, 'shown to one session, once');
    },
  };
}
