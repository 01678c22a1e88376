/**
 * `agent-bus web`: the dashboard over the local bus, on a listener of its
 * own (loopback unless told otherwise), for the human at this machine. A key
 * made for the run signs the browser in; the printed URL carries it once.
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { Bus } from '../../core/bus.js';
import { busPaths } from '../../adapters/paths.js';
import { setting, type Env } from '../../model/settings.js';
import { BusError } from '../../model/errors.js';
import { listenOn } from '../listen.js';
import { localAccess, type DashboardActor } from './access.js';
import { checkAssets } from './assets.js';
import { Dashboard } from './dashboard.js';
import type { DashboardFleet } from './fleet-api.js';
import { SharedChanges } from '../waits.js';
import { serveOutbox } from '../../adapters/outbox-serving.js';

/** Hosts that listen on every address: any name may reach them, so no Host is refused. */
const WILDCARD_HOSTS = new Set(['0.0.0.0', '::', '[::]']);

/** Whether a host to listen on is this machine's alone. */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || host.startsWith('127.');
}

export interface WebOptions {
  env: Env;
  host: string;
  port: number;
  version: string;
  actor: Omit<DashboardActor, 'place'>;
  log(line: string): void;
  /** Open this machine's bus. */
  openBus(): Bus;
  /** This machine's fleet over the bus opened, for the dashboard to spawn and stop agents with. */
  fleet?(bus: Bus): DashboardFleet;
}

export interface WebServer {
  /** The URL with the run's key: what opens a signed-in dashboard. */
  url: string;
  close(): Promise<void>;
}

export async function startWebServer(options: WebOptions): Promise<WebServer> {
  const { env } = options;
  // Refused at start, not at the first visit: `agent-bus web` is nothing without its page.
  checkAssets();
  const bus: Bus = options.openBus();
  bus.mail.keepSearchIndexCurrent();
  const changes = new SharedChanges(bus, setting(env, 'AGENT_BUS_WATCH_POLL_SECONDS') * 1000);
  const access = localAccess(options.actor);
  // The names this dashboard answers to, once its port is known: another name rebound to this address is refused.
  const hosts = new Set<string>();
  const dashboard = new Dashboard({
    bus,
    env,
    auditPath: busPaths(env).audit,
    access,
    changes,
    version: options.version,
    fleet: options.fleet?.(bus) ?? null,
    log: options.log,
    hosts: WILDCARD_HOSTS.has(options.host) ? null : hosts,
  });
  const server = createServer((req, res) => {
    void dashboard.handle(req, res);
  });
  server.headersTimeout = 15_000;
  server.requestTimeout = 60_000;
  let base: string;
  try {
    base = await listenOn(server, options.host, options.port, '--port, or --port 0 for a free one');
  } catch (error) {
    dashboard.close();
    await changes.close();
    await bus.close();
    throw error;
  }
  const port = base.slice(base.lastIndexOf(':') + 1);
  for (const name of [options.host.includes(':') ? `[${options.host}]` : options.host, '127.0.0.1', 'localhost', '[::1]']) hosts.add(`${name}:${port}`);
  const stopPruning = bus.retention.keepPruned('web', (line) => options.log(line));
  const outbox = serveOutbox(bus, options.env, (line) => options.log(line));
  let closing: Promise<void> | null = null;
  return {
    url: `${base}/?key=${access.key}`,
    close() {
      closing ??= (async () => {
        stopPruning();
        dashboard.close();
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeAllConnections();
        await closed;
        await changes.close();
        await outbox.stop();
        await bus.close();
      })();
      return closing;
    },
  };
}

/** The command that opens a URL in the desktop's browser, or null where there is no desktop. */
function browserCommand(env: Env, platform = process.platform): [string, string[]] | null {
  const chosen = env.BROWSER?.trim();
  if (chosen) return [chosen, []];
  if (platform === 'darwin') return ['open', []];
  if (platform === 'win32') return ['rundll32', ['url.dll,FileProtocolHandler']];
  return env.DISPLAY || env.WAYLAND_DISPLAY ? ['xdg-open', []] : null;
}

/** Open `url` in a browser if this machine has one; the URL is an argument, never shell text. */
export function openBrowser(url: string, env: Env): boolean {
  const command = browserCommand(env);
  if (command === null) return false;
  try {
    const child = spawn(command[0], [...command[1], url], { detached: true, stdio: 'ignore', shell: false });
    child.on('error', () => undefined);
    child.unref();
    return true;
  } catch {
    return false;
  }
}

/** `agent-bus web`: serve, print the URL, open it, and run until SIGTERM or SIGINT. */
export async function runWebServer(options: WebOptions & { open: boolean; announce(line: string): void }): Promise<number> {
  let web: WebServer;
  try {
    web = await startWebServer(options);
  } catch (error) {
    options.log(`agent-bus: ${(error as Error).message}`);
    return error instanceof BusError ? error.exitCode : 1;
  }
  options.announce(`agent-bus web: ${web.url}`);
  if (!isLoopbackHost(options.host)) options.log(`agent-bus web: listening on ${options.host}, not only this machine: the key travels over plain HTTP; put TLS in front of it or use --host 127.0.0.1`);
  if (options.open) openBrowser(web.url, options.env);
  return new Promise<number>((resolve) => {
    const stop = (): void => {
      void web.close().finally(() => resolve(0));
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
}
