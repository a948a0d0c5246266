import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/storage/database.js';
import { openPglite } from '../../src/storage/pglite.js';

/** A statement that keeps PGlite (and so this thread) busy for a few ms. */
const BUSY = 'SELECT count(*) FROM generate_series(1, 100000)';

/**
 * PGlite is one connection on this thread (src/storage/pglite.ts): statements take turns, one per
 * turn of the event loop, and a claim, due at a departure the gate granted, goes ahead of the rest.
 */
describe("statements on PGlite's one connection", () => {
  let db: Database;
  beforeAll(async () => {
    db = await openPglite(undefined);
  });
  afterAll(async () => {
    await db?.close();
  });

  it('runs an urgent statement before every statement already waiting', async () => {
    const finished: string[] = [];
    const waiting = Array.from({ length: 20 }, (_, i) => db.query(BUSY).then(() => finished.push(`statement ${i}`)));
    const urgent = db
      .ahead()
      .query('SELECT 1')
      .then(() => finished.push('urgent'));
    await Promise.all([...waiting, urgent]);
    // The first statement was running when the urgent one came; the urgent one ran next.
    expect(finished.slice(0, 3)).toEqual(['statement 0', 'urgent', 'statement 1']);
  });

  it('runs timers between two statements, not after all those waiting', async () => {
    const finished: string[] = [];
    const waiting = Array.from({ length: 20 }, (_, i) => db.query(BUSY).then(() => finished.push(`statement ${i}`)));
    setTimeout(() => finished.push('timer'), 1);
    await Promise.all(waiting);
    const timerAt = finished.indexOf('timer');
    expect(timerAt).toBeGreaterThanOrEqual(0);
    expect(timerAt).toBeLessThan(4);
  });

  it('runs a transaction as one turn: no statement runs between its own', async () => {
    const seen: string[] = [];
    let other: Promise<unknown> | undefined;
    await db.transaction(async (tx) => {
      await tx.query('SELECT 1');
      seen.push('transaction began');
      other = db
        .ahead()
        .query('SELECT 1')
        .then(() => seen.push('other'));
      await new Promise((resolve) => setTimeout(resolve, 20));
      await tx.query('SELECT 1');
      seen.push('transaction ended');
    });
    await other;
    expect(seen).toEqual(['transaction began', 'transaction ended', 'other']);
  });
});
