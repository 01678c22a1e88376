/** The agent-bus library: the same operations the CLI and MCP server use. */
export { Bus, readerIdentity } from './core/bus.js';
export type { SendRequest, SendResult, ReadRequest, ForgetResult } from './core/bus.js';
export { openBus, publishNotice } from './runtime.js';
export { ChannelFullError, Notices } from './core/notice-ops.js';
export type { ChannelView, PublishRequest, PublishResult, NoticeView } from './core/notice-ops.js';
export { SEVERITIES } from './core/notices.js';
export type { Severity } from './core/notices.js';
export { parseSubscriptions } from './core/subscriptions.js';
export type { Subscriptions } from './core/subscriptions.js';
export { busPaths } from './core/paths.js';
export * from './model/errors.js';
export * from './core/names.js';
export type { MessageView, AgentView } from './core/views.js';
export { registrationsFor } from './core/roster.js';
export type { Store } from './store/ports.js';
