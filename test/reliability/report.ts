/**
 * What every reliability test prints: its figures and the seed it drew from, on one line a
 * person (and the README's table) can read. AGENT_BUS_TEST_SEED replays a run.
 */
export function seedFor(name: string): number {
  const given = Number(process.env.AGENT_BUS_TEST_SEED);
  if (Number.isSafeInteger(given) && given > 0) return given;
  let hash = 2166136261;
  for (const char of `${name}:${Date.now()}`) hash = Math.imul(hash ^ char.charCodeAt(0), 16777619) >>> 0;
  return hash || 1;
}

export function figure(name: string, figures: Record<string, unknown>): void {
  process.stdout.write(`reliability ${name}: ${Object.entries(figures).map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`).join(' ')}\n`);
}

export { randomFrom } from '../../scripts/seeded-random.mjs';
