/**
 * The MCP tools, one module per family (roster, mail, notices, the brain), each attributed to the
 * server's own identity, registered in the order a client lists them.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { brainTools } from './brain-tools.js';
import { mailTools } from './mail-tools.js';
import { noticeTools } from './notice-tools.js';
import { reservationTools } from './reservation-tools.js';
import { taskTools } from './task-tools.js';
import { fleetTools } from './fleet-tools.js';
import { rosterTools } from './roster-tools.js';
import { toolKit, type ToolContext } from './tool-kit.js';

export { toolError, toolResult, type ToolContext } from './tool-kit.js';

export function buildTools(server: McpServer, context: ToolContext): void {
  const kit = toolKit(server, context);
  rosterTools(kit);
  mailTools(kit);
  noticeTools(kit);
  reservationTools(kit);
  taskTools(kit);
  fleetTools(kit);
  brainTools(kit);
}
