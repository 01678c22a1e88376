/**
 * A stand-in for the Gemini API on 127.0.0.1: it logs every request and answers from a scenario (a
 * function call, or a line of text), as the server-sent events Gemini CLI streams. The CLI's helper
 * requests (its router asks for a JSON verdict by a schema, and offers no tools) get a fixed answer
 * and are not logged: only the agent's own turns are.
 */
import type http from 'node:http';
import { json, listen, parseBody } from '../helpers/http-server.js';
import type { FakeServer } from './harness.js';

export type GeminiReply = { call: string; args: Record<string, unknown> } | { text: string };

export type GeminiPart = { text?: string; functionCall?: { name: string; args?: unknown }; functionResponse?: { name: string; response?: unknown } };

export type GeminiBody = {
  contents?: Array<{ role?: string; parts?: GeminiPart[] }>;
  tools?: Array<{ functionDeclarations?: Array<{ name?: string }> }>;
  generationConfig?: { responseSchema?: unknown; responseJsonSchema?: unknown; responseMimeType?: string };
  systemInstruction?: unknown;
};

const USAGE = { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 };

/** The declared tools a request offers the model, by name. */
export function offeredTools(body: GeminiBody): string[] {
  return (body.tools ?? []).flatMap((tool) => (tool.functionDeclarations ?? []).map((declaration) => declaration.name ?? ''));
}

/** Whether the last turn of a request carries a function's response: the model's call has come back. */
export function hasFunctionResponse(body: GeminiBody): boolean {
  return (body.contents?.at(-1)?.parts ?? []).some((part) => part.functionResponse !== undefined);
}

/** The function responses a request carries, as text, in order. */
export function functionResponses(raw: string): string[] {
  const body = parseBody<GeminiBody>(raw);
  return (body.contents ?? []).flatMap((content) => (content.parts ?? []).filter((part) => part.functionResponse !== undefined).map((part) => JSON.stringify(part.functionResponse?.response ?? null)));
}

function candidate(reply: GeminiReply): unknown {
  const part = 'call' in reply ? { functionCall: { name: reply.call, args: reply.args } } : { text: reply.text };
  return { candidates: [{ content: { role: 'model', parts: [part] }, finishReason: 'STOP', index: 0 }], usageMetadata: USAGE, modelVersion: 'fake' };
}

/** A helper request's answer: whatever JSON its schema wants, as far as the router and the next-speaker check go. */
function helperAnswer(): unknown {
  const text = JSON.stringify({ complexity_reasoning: 'a scripted test', complexity_score: 1, reasoning: 'the user speaks next', next_speaker: 'user' });
  return { candidates: [{ content: { role: 'model', parts: [{ text }] }, finishReason: 'STOP', index: 0 }], usageMetadata: USAGE };
}

export async function startFakeGemini(scenario: (body: GeminiBody, raw: string, index: number) => GeminiReply): Promise<FakeServer> {
  const requests: string[] = [];
  const server = await listen((req, raw, res: http.ServerResponse) => {
    const url = req.url ?? '';
    const streaming = url.includes(':streamGenerateContent');
    if (req.method !== 'POST' || !(streaming || url.includes(':generateContent') || url.includes(':countTokens'))) return json(res, 404, { error: { code: 404, message: url, status: 'NOT_FOUND' } });
    if (url.includes(':countTokens')) return json(res, 200, { totalTokens: 10 });
    const body = parseBody<GeminiBody>(raw);
    const reply = offeredTools(body).length === 0 ? null : scenario(body, raw, requests.push(raw));
    const answer = reply === null ? helperAnswer() : candidate(reply);
    if (!streaming) return json(res, 200, answer);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.write(`data: ${JSON.stringify(answer)}\r\n\r\n`);
    res.end();
  });
  return { ...server, requests };
}
