/**
 * The opencode plugin `agent-bus init` generates. opencode has no shell hooks,
 * so the plugin runs the hook commands itself: mail goes into the system
 * prompt before each model request (repeated for the rest of the turn, since
 * that addition is not kept in the transcript), and when a session goes idle
 * with mail it must act on, the plugin starts one follow-up turn.
 */
export const PLUGIN_MARKER = '// Managed by `agent-bus init` — regenerated on every run; edits are lost.';

/** The plugin's source, with the binary and agent name embedded as JSON string literals. */
export function opencodePluginSource(bin: string, name: string): string {
  return `${PLUGIN_MARKER}
// agent-bus for opencode: shows new mail to the model and asks for a follow-up turn when mail waits.
import { spawn } from 'node:child_process';

const BIN = ${JSON.stringify(bin)};
const NAME = ${JSON.stringify(name)};
const TIMEOUT_MS = Number(process.env.AGENT_BUS_HOOK_TIMEOUT_MS) || 10000;

export const AgentBus = async ({ client, directory }) => {
  const stuck = new Set();
  const mail = new Map();
  const checking = new Set();

  // Run one hook; never throws, never waits past TIMEOUT_MS, never restarts a hook that is still stuck.
  const run = (subcommand, sessionID) => {
    if (stuck.has(subcommand)) return Promise.resolve('');
    return new Promise((resolve) => {
      let out = '';
      let done = false;
      const finish = (text) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        resolve(text.trim());
      };
      let child;
      try {
        child = spawn(BIN, [subcommand, '--client', 'opencode'], {
          cwd: directory,
          env: { ...process.env, AGENT_BUS_NAME: NAME },
          stdio: ['pipe', 'pipe', 'ignore'],
        });
      } catch {
        return finish('');
      }
      stuck.add(subcommand);
      const timer = setTimeout(() => finish(''), TIMEOUT_MS);
      child.stdout.on('data', (chunk) => (out += chunk));
      child.on('error', () => {
        stuck.delete(subcommand);
        finish('');
      });
      child.on('close', () => {
        stuck.delete(subcommand);
        finish(out);
      });
      child.stdin.on('error', () => {});
      child.stdin.end(JSON.stringify({ cwd: directory, session_id: sessionID ?? null }));
    });
  };

  return {
    'experimental.chat.system.transform': async (input, output) => {
      try {
        const sessionID = input?.sessionID;
        const text = await run('hook-user-prompt', sessionID);
        const turn = mail.get(sessionID) ?? [];
        if (text) turn.push(text);
        mail.set(sessionID, turn);
        if (turn.length > 0) output.system.push(turn.join('\\n'));
      } catch {
        // The model request goes ahead without mail.
      }
    },
    event: async ({ event }) => {
      try {
        const idle = event?.type === 'session.idle' || (event?.type === 'session.status' && event?.properties?.status?.type === 'idle');
        const sessionID = event?.properties?.sessionID;
        if (!idle || !sessionID || checking.has(sessionID)) return;
        checking.add(sessionID);
        try {
          mail.delete(sessionID);
          const session = await client.session.get({ path: { id: sessionID } });
          if (session?.data?.parentID ?? session?.parentID) return; // A subagent's session: its parent handles mail.
          const answer = await run('hook-stop', sessionID);
          if (!answer) return;
          const decision = JSON.parse(answer);
          if (decision?.decision === 'block' && decision.reason) {
            await client.session.prompt({ path: { id: sessionID }, body: { parts: [{ type: 'text', text: decision.reason }] } });
          }
        } finally {
          checking.delete(sessionID);
        }
      } catch {
        // Best effort: mail not acted on now waits for the next prompt.
      }
    },
  };
};
`;
}
