/**
 * Urgent mail between tool calls: `hook-pre-tool` looks for it before every tool call of every agent.
 * Measured with no urgent mail for the agent among 1,000 plain unread messages to it and 1,000 urgent
 * ones to others (some of them its repo-mates), against the floor (bench/hooks.ts: a bare Node.js that
 * opens the same database with the same driver) in the same rounds, and the same hook with
 * AGENT_BUS_MIDTURN=off, which makes no look at all.
 */
import { openBus } from '../src/runtime.js';
import { registrationsFor } from '../src/core/roster.js';
import { CLI, median, round, timedQuiet, type Workspace } from './util.js';
import { floorArgs, holdBusOpen, overFloor, type HookFigure } from './hooks.js';

const AGENT = 'bench-repo/claude';
const PLAIN_TO_AGENT = 1_000;
const URGENT_TO_OTHERS = 1_000;


export async function preToolNoUrgent(ws: Workspace): Promise<HookFigure> {
  const RUNS = 30;
  const WARMUP = 3;
  const location = await ws.bus('pre-tool-no-urgent');
  // Repo-mates of the agent (bench-repo/codex-N) and agents elsewhere, with urgent mail each.
  const others = [...Array.from({ length: 20 }, (_, index) => `bench-repo/codex-${index + 1}`), ...Array.from({ length: 80 }, (_, index) => `repo-${index}/claude`)];
  const bus = openBus(location.env);
  try {
    for (const name of [AGENT, ...others]) await bus.roster.register(registrationsFor(name, location.home, true));
    const sends: Array<Promise<unknown>> = [];
    for (let index = 0; index < PLAIN_TO_AGENT; index++) sends.push(bus.mail.send({ from: 'human', to: AGENT, body: `plain note ${index}` }));
    for (let index = 0; index < URGENT_TO_OTHERS; index++) sends.push(bus.mail.send({ from: 'human', to: others[index % others.length] as string, body: `urgent ${index}`, urgent: true }));
    await Promise.all(sends);
  } finally {
    await bus.close();
  }
  const payload = JSON.stringify({ session_id: 'bench-session', cwd: location.home, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'ls' } });
  const hookArgs = [CLI, 'hook-pre-tool', '--client', 'claude'];
  const env = { ...location.env, AGENT_BUS_NAME: AGENT, AGENT_BUS_REPO: location.home };
  const off = { ...env, AGENT_BUS_MIDTURN: 'off' };
  const floor = floorArgs(location);
  const times = { hook: [] as number[], off: [] as number[], node: [] as number[], floor: [] as number[] };
  const kinds = floor === null ? (['hook', 'off', 'node'] as const) : (['hook', 'off', 'node', 'floor'] as const);
  const held = await holdBusOpen(location);
  for (let run = 0; run < WARMUP + RUNS; run++) {
    // Each goes first, second, third and fourth in turn.
    const order = kinds.map((_, index, all) => all[(index + run) % all.length] as (typeof all)[number]);
    for (const which of order) {
      const result =
        which === 'node' ? timedQuiet(['-e', '0'], env, location.home, '') : which === 'floor' ? timedQuiet(floor ?? [], env, location.home, '') : timedQuiet(hookArgs, which === 'off' ? off : env, location.home, payload);
      if ((which === 'hook' || which === 'off') && result.stdout.trim() !== '') throw new Error(`the hook showed something with no urgent mail for ${AGENT}: ${result.stdout.slice(0, 300)}`);
      if (run >= WARMUP) times[which].push(result.ms);
    }
  }
  await held.close();
  // The plain mail is still waiting for the turn's end.
  const after = openBus(location.env);
  try {
    const pending = await after.inbox.pending(AGENT);
    if (pending !== PLAIN_TO_AGENT) throw new Error(`${pending} messages wait for ${AGENT}, not ${PLAIN_TO_AGENT}`);
  } finally {
    await after.close();
  }
  const hook = median(times.hook);
  const node = median(times.node);
  const figure = overFloor(times.hook, times.floor);
  const offAbove = median(times.off) - median(times.floor);
  return {
    value: figure.value,
    shown: `${figure.shown}; ${offAbove >= 0 ? '+' : ''}${offAbove.toFixed(1)} ms with AGENT_BUS_MIDTURN=off`,
    details: {
      runs: RUNS,
      plainToAgent: PLAIN_TO_AGENT,
      urgentToOthers: URGENT_TO_OTHERS,
      ...figure.details,
      offMedianMs: round(median(times.off)),
      offDifferenceMs: round(offAbove),
      nodeMedianMs: round(node),
      ratioToNode: round(hook / node, 3),
    },
  };
}
