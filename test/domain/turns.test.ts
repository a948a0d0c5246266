import { describe, expect, it } from 'vitest';
import { createTurnCounter } from '../../src/domain/turns.js';

describe('turns', () => {
  it("numbers an account's deliveries within each second they are due, apart from other accounts'", () => {
    const turnOf = createTurnCounter();
    const now = 10_000;
    expect([turnOf('busy', 10_100, now), turnOf('busy', 10_900, now), turnOf('quiet', 10_500, now), turnOf('busy', 11_000, now)]).toStrictEqual([1, 2, 1, 1]);
    // A second long past is forgotten once the clock moves on; a future one is kept.
    expect(turnOf('busy', 13_000, 12_500)).toBe(1);
    expect(turnOf('busy', 13_200, 12_600)).toBe(2);
  });
});
