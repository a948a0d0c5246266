import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { preparedQueries } from '../../src/storage/pglitePrepared.js';

/**
 * Queries on PGlite run as named prepared statements (src/storage/pglitePrepared.ts): each text
 * is parsed once, then bound and executed. Its rows must be PGlite's own `query()`'s, for every
 * type the store binds and reads, however often a text runs; its row count pg's (the rows
 * returned, else the rows changed); and an error must leave the connection as `query()` would.
 */
describe('prepared statements on PGlite', () => {
  let db: PGlite;
  let prepared: ReturnType<typeof preparedQueries>;
  beforeAll(async () => {
    db = await PGlite.create();
    prepared = preparedQueries(db);
    await db.exec(`CREATE TABLE things (id uuid PRIMARY KEY, name text, body jsonb, at timestamptz, n bigint, tags text[])`);
  });
  afterAll(async () => {
    await db?.close();
  });

  const INSERT = `INSERT INTO things (id, name, body, at, n, tags)
    SELECT id, name, body, at, n, CASE WHEN tag IS NOT NULL THEN ARRAY[tag, 'and another'] END
    FROM unnest($1::uuid[], $2::text[], $3::jsonb[], $4::timestamptz[], $5::bigint[], $6::text[]) AS t(id, name, body, at, n, tag)
    RETURNING id, name, body, at, n, tags`;

  it("answers as PGlite's query() does, for the same text run again with other values", async () => {
    const rows = [
      ['00000000-0000-4000-8000-000000000001', 'one', { a: 1, list: [1, 2] }, new Date('2026-11-25T10:00:00.123Z'), '9007199254740993', 'x'],
      ['00000000-0000-4000-8000-000000000002', null, null, null, null, null],
    ] as const;
    const SELECT = 'SELECT id, name, body, at, n, tags FROM things WHERE id = ANY($1::uuid[]) OR name = $2 ORDER BY id';
    for (const row of rows) {
      const inserted = await prepared(
        INSERT,
        row.map((value) => [value]),
      );
      expect(inserted.rowCount).toBe(1);
      expect(inserted.rows).toStrictEqual((await db.query(SELECT, [[row[0]], null])).rows);
    }
    for (const [ids, name] of [
      [rows.map((row) => row[0]), null],
      [[], 'one'],
      [[rows[1][0]], 'none'],
    ] as const) {
      const ours = await prepared(SELECT, [ids, name]);
      const theirs = await db.query(SELECT, [ids, name]);
      expect(ours.rows).toStrictEqual(theirs.rows);
      expect(ours.rowCount).toBe(theirs.rows.length);
    }
  });

  it('counts the rows a statement without RETURNING changed', async () => {
    const UPDATE = 'UPDATE things SET n = $1 WHERE name IS NOT DISTINCT FROM $2';
    expect((await prepared(UPDATE, [5, 'one'])).rowCount).toBe(1);
    expect((await prepared(UPDATE, [6, 'nobody'])).rowCount).toBe(0);
    expect((await prepared(UPDATE, [7, null])).rows).toStrictEqual([]);
  });

  it('throws the database error, and the connection goes on', async () => {
    const DUPLICATE = 'INSERT INTO things (id) VALUES ($1)';
    await expect(prepared(DUPLICATE, ['00000000-0000-4000-8000-000000000001'])).rejects.toMatchObject({ code: '23505' });
    await expect(prepared('SELECT $1::int AS n', ['not a number'])).rejects.toMatchObject({ code: '22P02' });
    expect((await prepared('SELECT $1::int AS n', [3])).rows).toStrictEqual([{ n: 3 }]);
  });

  it('runs inside a transaction, and a rollback takes its writes back', async () => {
    const id = '00000000-0000-4000-8000-000000000003';
    await expect(
      db.transaction(async () => {
        await prepared('INSERT INTO things (id, name) VALUES ($1, $2)', [id, 'rolled back']);
        expect((await prepared('SELECT name FROM things WHERE id = $1', [id])).rows).toStrictEqual([{ name: 'rolled back' }]);
        throw new Error('abandon');
      }),
    ).rejects.toThrow('abandon');
    expect((await prepared('SELECT name FROM things WHERE id = $1', [id])).rows).toStrictEqual([]);
  });
});
