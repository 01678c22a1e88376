/**
 * A stand-in for the OpenAI Responses API on 127.0.0.1 (what Codex talks to):
 * it logs every request and answers from a scenario, a function call on an
 * MCP namespace, a freeform tool call or a line of text, as server-sent events.
 */
import type http from 'node:http';
import { json, listen, parseBody } from '../helpers/http-server.js';
import type { FakeServer } from './harness.js';

/**
 * A function call (on an MCP namespace, or of one of the client's own tools when `namespace` is
 * null), a call of a freeform (custom) tool such as `apply_patch` with its raw input, or a line of text.
 */
export type ResponsesReply = { namespace: string | null; name: string; input: Record<string, unknown> } | { custom: string; input: string } | { text: string };

export type FakeResponses = FakeServer;

type Item = { type?: string; role?: string; output?: unknown };
export type ResponsesBody = { input?: Item[]; model?: string; tools?: Array<{ type?: string; name?: string }> };

function send(res: http.ServerResponse, data: { type: string } & Record<string, unknown>): void {
  res.write(`event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`);
}

/** Whether the items after the last user message include a tool's output. */
export function hasToolOutput(body: ResponsesBody): boolean {
  const input = body.input ?? [];
  const lastUser = input.map((item) => item.role === 'user').lastIndexOf(true);
  return input.slice(lastUser + 1).some((item) => /output/.test(item.type ?? ''));
}

export async function startFakeResponses(scenario: (body: ResponsesBody, raw: string, index: number) => ResponsesReply): Promise<FakeResponses> {
  const requests: string[] = [];
  const server = await listen((req, raw, res) => {
      const url = (req.url ?? '').split('?')[0] ?? '';
      if (req.method === 'GET' && url.endsWith('/models')) return json(res, 200, { object: 'list', data: [{ id: 'fake-model', object: 'model', created: 0, owned_by: 'fake' }], models: [] });
      if (!(req.method === 'POST' && url.endsWith('/responses'))) return json(res, 404, { error: { message: `not found ${url}` } });
      requests.push(raw);
      const body = parseBody<ResponsesBody>(raw);
      const n = requests.length;
      const reply = scenario(body, raw, n);
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      send(res, { type: 'response.created', response: { id: `resp_${n}` } });
      if ('namespace' in reply) {
        send(res, {
          type: 'response.output_item.done',
          item: { type: 'function_call', id: `fc_${n}`, call_id: `call_${n}`, ...(reply.namespace === null ? {} : { namespace: reply.namespace }), name: reply.name, arguments: JSON.stringify(reply.input) },
        });
      } else if ('custom' in reply) {
        send(res, { type: 'response.output_item.done', item: { type: 'custom_tool_call', id: `ctc_${n}`, call_id: `call_${n}`, name: reply.custom, input: reply.input } });
      } else {
        send(res, { type: 'response.output_item.added', item: { type: 'message', role: 'assistant', id: `msg_${n}`, content: [] } });
        send(res, { type: 'response.output_text.delta', delta: reply.text, item_id: `msg_${n}` });
        send(res, { type: 'response.output_item.done', item: { type: 'message', role: 'assistant', id: `msg_${n}`, content: [{ type: 'output_text', text: reply.text }] } });
      }
      send(res, {
        type: 'response.completed',
        response: { id: `resp_${n}`, usage: { input_tokens: 10, input_tokens_details: null, output_tokens: 5, output_tokens_details: null, total_tokens: 15 } },
      });
      res.end();
  });
  return { ...server, requests };
}

/** The texts of every tool output a request carries (function and freeform calls alike), in order. */
export function toolOutputs(raw: string): string[] {
  return (parseBody<ResponsesBody>(raw).input ?? [])
    .filter((item) => /_output$/.test(item.type ?? ''))
    .map((item) =>
      typeof item.output === 'string'
        ? item.output
        : Array.isArray(item.output)
          ? (item.output as Array<{ text?: unknown }>).map((part) => (typeof part.text === 'string' ? part.text : '')).join('\n')
          : '',
    );
}
