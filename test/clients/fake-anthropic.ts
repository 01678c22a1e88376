/**
 * A stand-in for the Anthropic Messages API on 127.0.0.1: it logs every
 * request and answers from a scenario (a tool call, or a line of text), as a
 * stream of server-sent events the way Claude Code expects.
 */
import type http from 'node:http';
import { json, listen, parseBody } from '../helpers/http-server.js';
import type { FakeServer } from './harness.js';

export type Reply = { tool: string; input: Record<string, unknown> } | { text: string };

export type FakeModel = FakeServer;

type Body = { messages?: Array<{ role: string; content: unknown }>; model?: string; stream?: boolean; tools?: Array<{ name?: string }> };

function send(res: http.ServerResponse, event: string, data: unknown): void {
  res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

export async function startFakeAnthropic(scenario: (body: Body, raw: string, index: number) => Reply): Promise<FakeModel> {
  const requests: string[] = [];
  const server = await listen((req, raw, res) => {
      const url = (req.url ?? '').split('?')[0] ?? '';
      if (req.method === 'POST' && url.endsWith('/v1/messages/count_tokens')) return json(res, 200, { input_tokens: 100 });
      if (!(req.method === 'POST' && url.endsWith('/v1/messages'))) return json(res, 404, { type: 'error', error: { type: 'not_found_error', message: url } });
      requests.push(raw);
      const body = parseBody<Body>(raw);
      const reply = scenario(body, raw, requests.length);
      const id = `msg_${requests.length}`;
      const usage = { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
      const block = 'tool' in reply ? { type: 'tool_use', id: `toolu_${requests.length}`, name: reply.tool, input: reply.input } : { type: 'text', text: reply.text };
      const stop = 'tool' in reply ? 'tool_use' : 'end_turn';
      if (!body.stream) return json(res, 200, { id, type: 'message', role: 'assistant', model: body.model ?? 'fake', content: [block], stop_reason: stop, stop_sequence: null, usage });
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      send(res, 'message_start', { type: 'message_start', message: { id, type: 'message', role: 'assistant', model: body.model ?? 'fake', content: [], stop_reason: null, stop_sequence: null, usage } });
      if ('tool' in reply) {
        send(res, 'content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: `toolu_${requests.length}`, name: reply.tool, input: {} } });
        send(res, 'content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify(reply.input) } });
      } else {
        send(res, 'content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
        send(res, 'content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: reply.text } });
      }
      send(res, 'content_block_stop', { type: 'content_block_stop', index: 0 });
      send(res, 'message_delta', { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 5 } });
      send(res, 'message_stop', { type: 'message_stop' });
      res.end();
  });
  return { ...server, requests };
}

/** Whether the last message of a request carries a tool result. */
/** The request offers the client's own tool `name` (an agent's turn does; a side request, such as a title, offers none). */
export function offersTool(body: Body, name: string): boolean {
  return (body.tools ?? []).some((tool) => tool.name === name);
}

export function hasToolResult(body: Body): boolean {
  const last = body.messages?.at(-1);
  return Array.isArray(last?.content) && (last.content as Array<{ type?: string }>).some((part) => part.type === 'tool_result');
}

/** The text of a tool result's content: a string, or text blocks. */
export function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return (content as Array<{ text?: unknown }>).map((part) => (typeof part.text === 'string' ? part.text : '')).join('\n');
}

/** The texts of every tool result a request carries, in order. */
export function toolResults(raw: string): string[] {
  const body = parseBody<Body>(raw);
  return (body.messages ?? []).flatMap((message) =>
    Array.isArray(message.content) ? (message.content as Array<{ type?: string; content?: unknown }>).filter((part) => part.type === 'tool_result').map((part) => resultText(part.content)) : [],
  );
}
