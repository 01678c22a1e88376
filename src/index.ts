/** The agent-bus library: the same operations the CLI and MCP server use. */
export { Bus } from './core/bus.js';
export { readerIdentity } from './core/inbox.js';
export type { SendRequest, SendResult } from './core/mail-ops.js';
export type { ReadRequest } from './core/inbox-ops.js';
export type { ForgetResult } from './core/roster-ops.js';
export { openBus, publishNotice } from './runtime.js';
export { ChannelFullError, Notices } from './core/notice-ops.js';
export type { ChannelView, PublishRequest, PublishResult, NoticeView } from './core/notice-ops.js';
export { SEVERITIES } from './core/notices.js';
export type { Severity } from './core/notices.js';
export { parseSubscriptions } from './core/subscriptions.js';
export type { Subscriptions } from './core/subscriptions.js';
export { busPaths } from './adapters/paths.js';
export * from './model/errors.js';
export * from './core/names.js';
export type { MessageView, AgentView } from './core/views.js';
export { registrationsFor } from './core/roster.js';
export type { Store } from './store/ports.js';
