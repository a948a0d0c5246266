/** How many inputs a remembered function keeps by default; past that it forgets them all and starts again. */
const MAX_REMEMBERED = 10_000;

/**
 * `compute`, remembered by its input. For what the engine derives from a target URL on every
 * delivery (its host, its pacer keys): a worker sends to the same few URLs again and again, and
 * parsing and hashing them anew each time was a visible share of its CPU profile. Bounded, so a
 * worker sending to ever new URLs holds no more than `maxEntries` of them.
 */
export function remembered<T>(compute: (input: string) => T, maxEntries = MAX_REMEMBERED): (input: string) => T {
  const known = new Map<string, T>();
  return (input) => {
    const found = known.get(input);
    if (found !== undefined) return found;
    const value = compute(input);
    if (known.size >= maxEntries) known.clear();
    known.set(input, value);
    return value;
  };
}

/** A target URL's host (`host:port`), as in-flight caps and pacing budgets count it. */
export const hostOf = remembered((url) => new URL(url).host);
