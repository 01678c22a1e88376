/**
 * "Did you mean" suggestions: the Ratcliff/Obershelp similarity that Python's
 * difflib uses, so suggestions match what users of the original saw.
 */

function longestCommonRun(a: string, aLo: number, aHi: number, b: string, bLo: number, bHi: number): [number, number, number] {
  let bestI = aLo;
  let bestJ = bLo;
  let bestSize = 0;
  let previous = new Map<number, number>();
  for (let i = aLo; i < aHi; i++) {
    const current = new Map<number, number>();
    for (let j = bLo; j < bHi; j++) {
      if (a[i] !== b[j]) continue;
      const size = (previous.get(j - 1) ?? 0) + 1;
      current.set(j, size);
      if (size > bestSize) {
        bestI = i - size + 1;
        bestJ = j - size + 1;
        bestSize = size;
      }
    }
    previous = current;
  }
  return [bestI, bestJ, bestSize];
}

function matchingCharacters(a: string, aLo: number, aHi: number, b: string, bLo: number, bHi: number): number {
  const [i, j, size] = longestCommonRun(a, aLo, aHi, b, bLo, bHi);
  if (size === 0) return 0;
  return (
    size +
    matchingCharacters(a, aLo, i, b, bLo, j) +
    matchingCharacters(a, i + size, aHi, b, j + size, bHi)
  );
}

export function similarity(a: string, b: string): number {
  const total = a.length + b.length;
  if (total === 0) return 1;
  return (2 * matchingCharacters(a, 0, a.length, b, 0, b.length)) / total;
}

export function closeMatches(word: string, candidates: Iterable<string>, limit = 3, cutoff = 0.6): string[] {
  const scored: Array<[number, string]> = [];
  for (const candidate of new Set(candidates)) {
    const score = similarity(word, candidate);
    if (score >= cutoff) scored.push([score, candidate]);
  }
  scored.sort((x, y) => y[0] - x[0] || (x[1] < y[1] ? -1 : 1));
  return scored.slice(0, limit).map(([, name]) => name);
}
