/**
 * Claude Code interactive, in tmux: what a user's first runs leave behind (the workspace trusted,
 * onboarding done, the API key accepted), a session started in the wired repo against a fake
 * model, prompts typed into it, and its end (the client and its hooks gone).
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sleep, waitUntil } from '../helpers/wait.js';
import { claude, claudeOffline } from './drivers.js';
import { CLIENT_BIN, type WiredRepo } from './harness.js';

const CLAUDE = join(CLIENT_BIN, 'claude');
const hasTmux = spawnSync('tmux', ['-V'], { encoding: 'utf8' }).status === 0;

/** Why an interactive test skips, or false. */
export const interactiveSkip: false | string = hasTmux && claude.skip === false ? false : 'needs tmux and Claude Code in clients/ (npm run test:clients installs it)';

export interface InteractiveClaude {
  /** What the terminal shows now. */
  pane(): string;
  /** Type a prompt and press Enter. */
  type(prompt: string): void;
  /** End the session: the pane runs Claude Code itself (the script execs it), then the terminal; idempotent. */
  stop(): Promise<void>;
}

/**
 * What a user's first interactive runs of Claude Code leave in the HOME of `s`'s bus: onboarding done,
 * the API key accepted, `s.repo` trusted and its agent-bus server (.mcp.json) enabled, the
 * bypass-permissions warning acknowledged.
 */
export function firstRunsDone(s: WiredRepo): void {
  const home = s.bus.env.HOME as string;
  writeFileSync(
    join(home, '.claude.json'),
    JSON.stringify({ hasCompletedOnboarding: true, customApiKeyResponses: { approved: ['dummy'], rejected: [] }, projects: { [s.repo]: { hasTrustDialogAccepted: true, enabledMcpjsonServers: ['agent-bus'] } } }),
  );
  mkdirSync(join(home, '.claude'), { recursive: true });
  writeFileSync(join(home, '.claude', 'settings.json'), JSON.stringify({ skipDangerousModePermissionPrompt: true }));
}

/**
 * Start Claude Code in `s.repo` against the fake model at `modelUrl` (`launch` added to its environment), and wait for its input
 * prompt; in bypass-permissions mode (--dangerously-skip-permissions) unless `bypass` is false.
 */
export async function startInteractiveClaude(s: WiredRepo, modelUrl: string, launch: NodeJS.ProcessEnv = {}, options: { bypass?: boolean } = {}): Promise<InteractiveClaude> {
  firstRunsDone(s);
  return startInTmux(s, 'claude', { ...s.bus.env, ...claudeOffline(modelUrl), IS_SANDBOX: '1', TERM: 'xterm-256color', ...launch }, `'${CLAUDE}'${options.bypass === false ? '' : ' --dangerously-skip-permissions'}`, /^❯/m);
}

/**
 * Start `command` (a shell command line) in `s.repo` in a tmux pane of its own, with `env` exported,
 * and wait for the screen to match `ready` (its input prompt).
 */
export async function startInTmux(s: WiredRepo, name: string, env: NodeJS.ProcessEnv, command: string, ready: RegExp): Promise<InteractiveClaude> {
  const home = env.HOME as string;
  const socket = join(s.bus.dir, 'tmux');
  mkdirSync(socket, { recursive: true });
  const tmux = (...args: string[]) => spawnSync('tmux', ['-L', 'agent-bus-test', ...args], { env: { ...process.env, TMUX_TMPDIR: socket, HOME: home }, encoding: 'utf8' });
  const start = join(s.bus.dir, `start-${name}.sh`);
  const exports = Object.entries(env)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => `export ${key}='${String(value).replace(/'/g, `'\\''`)}'`);
  writeFileSync(start, `#!/bin/sh\n${exports.join('\n')}\ncd '${s.repo}'\nexec ${command}\n`);
  chmodSync(start, 0o755);
  const pane = (): string => tmux('capture-pane', '-p', '-t', name).stdout ?? '';
  let stopped = false;
  const session: InteractiveClaude = {
    pane,
    type(prompt) {
      tmux('send-keys', '-t', name, '-l', prompt);
      tmux('send-keys', '-t', name, 'Enter');
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      const panePid = Number((tmux('display-message', '-p', '-t', name, '#{pane_pid}').stdout ?? '').trim());
      if (panePid > 0) {
        try {
          process.kill(panePid, 'SIGTERM');
        } catch {
          // Already gone.
        }
      }
      tmux('kill-server');
      // The client and its hooks take a moment to go after their terminal does.
      await sleep(1000);
    },
  };
  if (tmux('new-session', '-d', '-s', name, '-x', '200', '-y', '50', start).status !== 0) throw new Error(`tmux could not start ${name}`);
  try {
    await waitUntil(() => ready.test(pane()), () => `the input prompt; the screen shows:\n${pane()}`, 60_000, 100);
  } catch (error) {
    await session.stop();
    throw error;
  }
  return session;
}
