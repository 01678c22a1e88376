// A small seeded random source (xorshift32) for the reliability suite and the soak: the same
// seed draws the same numbers, so a failing run can be replayed.
export function randomFrom(seed) {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state / 2 ** 32;
  };
}

/** The items in an order drawn from `seed` (Fisher–Yates), the same order for the same seed. */
export function shuffledBy(seed, items) {
  const random = randomFrom(seed);
  const order = [...items];
  for (let index = order.length - 1; index > 0; index--) {
    const other = Math.floor(random() * (index + 1));
    [order[index], order[other]] = [order[other], order[index]];
  }
  return order;
}
