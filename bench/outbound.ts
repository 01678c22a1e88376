/**
 * What integrations out cost a send: sends/s with three webhook integrations out that each want
 * every send (the events queued in the send's own transaction) and a process serving the outbox
 * whose receiver never answers (or refuses every attempt), against no integration at all, in bursts
 * taken in turn. Every event is checked queued.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { serveOutbox } from '../src/adapters/outbox-serving.js';
import { registrationsFor } from '../src/core/roster.js';
import { openBus } from '../src/runtime.js';
import { quietServer } from './search.js';
import { median, round, type Engine, type Workspace } from './util.js';

/** A receiver that takes each request and never answers it: the worst a send could wait on. */
async function hangingReceiver(): Promise<{ url: string; close: () => Promise<void> }> {
  const server: Server = createServer(() => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A loopback URL nothing listens on: every attempt is refused at once, and held off by its integration's backoff. */
async function refusingUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/hook`;
}

/** One side of the comparison: a bus of its own, with three integrations out or none, its outbox served. */
interface Side {
  bus: ReturnType<typeof openBus>;
  serving: { stop: () => Promise<void> };
  seconds: number;
  sends: number;
}

async function openSide(ws: Workspace, name: string, engine: Engine, integrations: number, url: string): Promise<Side> {
  const location = await ws.bus(name, engine);
  await quietServer(location);
  const bus = openBus(location.env);
  const serving = serveOutbox(bus, { ...location.env, AGENT_BUS_WATCH_POLL_SECONDS: '0.2' });
  for (const agent of ['bench/alpha', 'alice']) await bus.roster.register(registrationsFor(agent, '/home/dev/src/bench', true));
  for (let index = 0; index < integrations; index++) await bus.integrations.add({ name: `out${index}`, kind: 'webhook', url, on: 'mail:alice' }, 'bench');
  return { bus, serving, seconds: 0, sends: 0 };
}

async function closeSide(side: Side): Promise<void> {
  await Promise.race([side.serving.stop(), new Promise((resolve) => setTimeout(resolve, 100))]);
  await side.bus.close().catch(() => undefined);
}

export async function outboundSendCost(ws: Workspace, body: string, engine: Engine = 'sqlite', receiverKind: 'hanging' | 'refusing' = 'hanging'): Promise<{ value: number; shown: string; details: Record<string, unknown> }> {
  const SENDERS = 32;
  const PER_SENDER = engine === 'postgres' ? 30 : 60;
  const ROUNDS = 12;
  const RUNS = 5;
  const INTEGRATIONS = 3;
  const receiver = await hangingReceiver();
  const ratios: number[] = [];
  const rates: Array<{ none: number; outbound: number }> = [];
  try {
    for (let run = 0; run < RUNS; run++) {
      const opened: Side[] = [];
      try {
        const none = await openSide(ws, `outbound-cost-${engine}-${receiverKind}-${run}-off`, engine, 0, receiver.url);
        opened.push(none);
        const outbound = await openSide(ws, `outbound-cost-${engine}-${receiverKind}-${run}-on`, engine, INTEGRATIONS, receiverKind === 'refusing' ? await refusingUrl() : receiver.url);
        opened.push(outbound);
        const request = { from: 'bench/alpha', to: 'alice', body };
        const burst = async (side: Side): Promise<void> => {
          const start = performance.now();
          await Promise.all(
            Array.from({ length: SENDERS }, async () => {
              for (let index = 0; index < PER_SENDER; index++) await side.bus.mail.send(request);
            }),
          );
          side.seconds += (performance.now() - start) / 1000;
          side.sends += SENDERS * PER_SENDER;
        };
        // Bursts in turn, ABBA, so a machine that slows down or speeds up favours neither side.
        for (let round = 0; round < ROUNDS; round++) {
          const order = round % 2 === 0 ? [none, outbound] : [outbound, none];
          for (const side of order) await burst(side);
        }
        for (const [side, wanted] of [
          [none, 0],
          [outbound, INTEGRATIONS],
        ] as const) {
          const events = (await side.bus.integrations.standing()).reduce((sum, row) => sum + row.queued + row.failed + row.delivered, 0);
          if (events !== wanted * side.sends) throw new Error(`${events} events out for ${side.sends} sends to ${wanted} integrations`);
        }
        const rate = { none: none.sends / none.seconds, outbound: outbound.sends / outbound.seconds };
        rates.push(rate);
        ratios.push(rate.outbound / rate.none);
      } finally {
        for (const side of opened) await closeSide(side);
      }
    }
  } finally {
    await receiver.close();
  }
  const ratio = median(ratios);
  const last = rates[rates.length - 1] as { none: number; outbound: number };
  return {
    value: round(ratio, 3),
    shown: `${ratio.toFixed(2)}× (${Math.round(last.outbound).toLocaleString('en-US')} vs ${Math.round(last.none).toLocaleString('en-US')} sends/s)`,
    details: { engine, receiver: receiverKind, sendsPerSide: SENDERS * PER_SENDER * ROUNDS, senders: SENDERS, rounds: ROUNDS, runs: RUNS, integrations: INTEGRATIONS, ratios: ratios.map((value) => round(value, 3)), sendsPerSecond: rates.map((rate) => ({ none: Math.round(rate.none), outbound: Math.round(rate.outbound) })) },
  };
}
