/**
 * A stand-in for an OpenAI-compatible chat completions API on 127.0.0.1 (what
 * opencode's openai-compatible provider talks to): logs every request and
 * answers from a scenario, a tool call or a line of text, streamed.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type ChatReply = { tool: string; input: Record<string, unknown> } | { text: string };
export type ChatBody = { messages?: Array<{ role: string; content: unknown }>; tools?: Array<{ function?: { name: string } }>; stream?: boolean; model?: string };

export interface FakeChat {
  url: string;
  requests: string[];
  close(): Promise<void>;
}

export function hasToolMessage(body: ChatBody): boolean {
  const messages = body.messages ?? [];
  const lastUser = messages.map((message) => message.role === 'user').lastIndexOf(true);
  return messages.slice(lastUser + 1).some((message) => message.role === 'tool');
}

export async function startFakeChat(scenario: (body: ChatBody, raw: string, index: number) => ChatReply): Promise<FakeChat> {
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
    req.on('end', () => {
      const url = (req.url ?? '').split('?')[0] ?? '';
      if (req.method === 'GET' && url.endsWith('/models')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ object: 'list', data: [{ id: 'fake-model', object: 'model', created: 0, owned_by: 'fake' }] }));
        return;
      }
      if (!(req.method === 'POST' && url.endsWith('/chat/completions'))) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `not found ${url}` } }));
        return;
      }
      requests.push(raw);
      let body: ChatBody = {};
      try {
        body = JSON.parse(raw) as ChatBody;
      } catch {
        body = {};
      }
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
        res.writeHead(200, { 'content-type': 'application/json' });
        const message = 'tool' in reply ? { role: 'assistant', content: null, tool_calls: delta.tool_calls } : { role: 'assistant', content: reply.text };
        res.end(JSON.stringify({ ...base, object: 'chat.completion', choices: [{ index: 0, message, finish_reason: finish }], usage }));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`);
      res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: {}, finish_reason: finish }], usage })}\n\n`);
      res.write('data: [DONE]\n\n');
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
