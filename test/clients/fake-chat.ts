/**
 * A stand-in for an OpenAI-compatible chat completions API on 127.0.0.1 (what
 * opencode's openai-compatible provider talks to): logs every request and
 * answers from a scenario, a tool call or a line of text, streamed.
 */
import { json, listen, parseBody } from '../helpers/http-server.js';
import type { FakeServer } from './harness.js';

export type ChatReply = { tool: string; input: Record<string, unknown> } | { text: string };
export type ChatBody = { messages?: Array<{ role: string; content: unknown }>; tools?: Array<{ function?: { name: string } }>; stream?: boolean; model?: string };

export type FakeChat = FakeServer;

export function hasToolMessage(body: ChatBody): boolean {
  const messages = body.messages ?? [];
  const lastUser = messages.map((message) => message.role === 'user').lastIndexOf(true);
  return messages.slice(lastUser + 1).some((message) => message.role === 'tool');
}

export async function startFakeChat(scenario: (body: ChatBody, raw: string, index: number) => ChatReply): Promise<FakeChat> {
  const requests: string[] = [];
  const server = await listen((req, raw, res) => {
      const url = (req.url ?? '').split('?')[0] ?? '';
      if (req.method === 'GET' && url.endsWith('/models')) return json(res, 200, { object: 'list', data: [{ id: 'fake-model', object: 'model', created: 0, owned_by: 'fake' }] });
      if (!(req.method === 'POST' && url.endsWith('/chat/completions'))) return json(res, 404, { error: { message: `not found ${url}` } });
      requests.push(raw);
      const body = parseBody<ChatBody>(raw);
      const n = requests.length;
      const reply = scenario(body, raw, n);
      const base = { id: `chatcmpl_${n}`, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model: body.model ?? 'fake-model' };
      const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
      const delta =
        'tool' in reply
          ? { role: 'assistant', tool_calls: [{ index: 0, id: `call_${n}`, type: 'function', function: { name: reply.tool, arguments: JSON.stringify(reply.input) } }] }
          : { role: 'assistant', content: reply.text };
      const finish = 'tool' in reply ? 'tool_calls' : 'stop';
      if (!body.stream) {
        const message = 'tool' in reply ? { role: 'assistant', content: null, tool_calls: delta.tool_calls } : { role: 'assistant', content: reply.text };
        return json(res, 200, { ...base, object: 'chat.completion', choices: [{ index: 0, message, finish_reason: finish }], usage });
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`);
      res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: {}, finish_reason: finish }], usage })}\n\n`);
      res.write('data: [DONE]\n\n');
      res.end();
  });
  return { ...server, requests };
}

/** The texts of every tool message a request carries, in order. */
export function toolMessages(raw: string): string[] {
  return (parseBody<ChatBody>(raw).messages ?? [])
    .filter((message) => message.role === 'tool')
    .map((message) =>
      typeof message.content === 'string'
        ? message.content
        : Array.isArray(message.content)
          ? (message.content as Array<{ text?: unknown }>).map((part) => (typeof part.text === 'string' ? part.text : '')).join('\n')
          : '',
    );
}
