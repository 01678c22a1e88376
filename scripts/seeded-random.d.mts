/** Types for scripts/seeded-random.mjs. */
export function randomFrom(seed: number): () => number;
