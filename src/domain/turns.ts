/**
 * Fairness between accounts, for when more deliveries are due than a process can send at once.
 * A delivery's turn is its place among its account's deliveries due within the same second
 * (1, 2, 3, …), and due deliveries run in order of turn. An account whose burst puts 3,000
 * deliveries in one second takes turns 1 to 3,000; another account's 20 in that second take
 * turns 1 to 20, so they go out among the burst's first, not behind all of it.
 */
export const TURN_WINDOW_MS = 1000;

/**
 * Counts turns: each call gives the next turn of `accountId` in the second of `dueAt`. Seconds
 * already past at `now` are forgotten, once a second, so the counts stay bounded.
 */
export function createTurnCounter() {
  const taken = new Map<string, { second: number; turns: number }>();
  let sweptAt = 0;
  return (accountId: string, dueAt: number, now: number) => {
    const current = Math.floor(now / TURN_WINDOW_MS);
    if (current > sweptAt) {
      for (const [key, count] of taken) if (count.second < current) taken.delete(key);
      sweptAt = current;
    }
    const second = Math.floor(dueAt / TURN_WINDOW_MS);
    const key = `${second} ${accountId}`;
    const count = taken.get(key) ?? { second, turns: 0 };
    count.turns++;
    taken.set(key, count);
    return count.turns;
  };
}
