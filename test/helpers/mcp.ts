/** Drive the real MCP server over stdio with the official client SDK. */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CLI } from './bus-env.js';

export interface McpSession {
  client: Client;
  transport: StdioClientTransport;
  stderr(): string;
  /** Call a tool and parse its JSON text content; throws with the text when the tool reports an error. */
  call<T = unknown>(name: string, args?: Record<string, unknown>): Promise<T>;
  /** Call a tool expecting a tool error; returns its text. */
  fails(name: string, args?: Record<string, unknown>): Promise<string>;
  pid(): number | null;
  close(): Promise<void>;
}

export async function connect(env: NodeJS.ProcessEnv, options: { cwd?: string; args?: string[]; node?: string } = {}): Promise<McpSession> {
  const transport = new StdioClientTransport({
    command: options.node ?? process.execPath,
    args: [CLI, 'serve', ...(options.args ?? [])],
    env: env as Record<string, string>,
    cwd: options.cwd ?? env.HOME,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const client = new Client({ name: 'agent-bus-tests', version: '1.0.0' });
  await client.connect(transport);
  const raw = async (name: string, args: Record<string, unknown>) => {
    const result = await client.callTool({ name, arguments: args });
    const text = (result.content as Array<{ type: string; text: string }>)[0]?.text ?? '';
    return { result, text };
  };
  return {
    client,
    transport,
    stderr: () => stderr,
    async call<T>(name: string, args: Record<string, unknown> = {}): Promise<T> {
      const { result, text } = await raw(name, args);
      if (result.isError) throw new Error(`${name} failed: ${text}`);
      return JSON.parse(text) as T;
    },
    async fails(name: string, args: Record<string, unknown> = {}): Promise<string> {
      const { result, text } = await raw(name, args);
      if (!result.isError) throw new Error(`${name} was expected to fail but returned ${text}`);
      return text;
    },
    pid: () => transport.pid,
    close: () => client.close(),
  };
}
