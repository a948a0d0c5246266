import { parse, protocol, type PGlite } from '@electric-sql/pglite';
import type { QueryResult } from './database.js';

type BackendMessage = Awaited<ReturnType<PGlite['execProtocolStream']>>[number];

interface Prepared {
  name: string;
  /** The type of each parameter, as the server inferred it: how to write each value. */
  parameterTypes: number[];
  /** The result's columns (absent for a statement that returns no rows): how to read each row. */
  rowDescription: BackendMessage | undefined;
}

const { serialize } = protocol;

/**
 * Queries on PGlite as named prepared statements, the way the PostgreSQL pool runs them
 * (database.ts). PGlite's own `query()` parses, describes and plans every call anew, in six
 * protocol steps; here a text is parsed and described once, and each call is one Bind, Execute
 * and Sync. PostgreSQL then keeps the parse tree and, once it has seen a statement a few times,
 * may keep its plan: the same plan cache a server connection has.
 *
 * The caller runs one statement at a time (pglite.ts takes turns); a transaction's statements
 * use it too, since PGlite is one connection.
 */
export function preparedQueries(db: PGlite) {
  const prepared = new Map<string, Prepared>();

  async function prepare(text: string): Promise<Prepared> {
    const name = `s${prepared.size}`;
    const messages = await db.execProtocolStream(Buffer.concat([serialize.parse({ name, text }), serialize.describe({ type: 'S', name }), serialize.sync()]));
    const statement = {
      name,
      parameterTypes: parse.parseDescribeStatementResults(messages),
      rowDescription: messages.find((message) => message.name === 'rowDescription'),
    };
    prepared.set(text, statement);
    return statement;
  }

  return async <Row>(text: string, params: unknown[] = []): Promise<QueryResult<Row>> => {
    const statement = prepared.get(text) ?? (await prepare(text));
    const values = params.map((value, i) => {
      if (value === null || value === undefined) return null;
      const write = db.serializers[statement.parameterTypes[i] ?? 0];
      // eslint-disable-next-line @typescript-eslint/no-base-to-string -- a type PGlite has no writer for goes as text, as pg sends it
      return write ? write(value) : String(value);
    });
    const messages = await db.execProtocolStream(
      Buffer.concat([serialize.bind({ statement: statement.name, values }), serialize.execute({}), serialize.sync()]),
    );
    // One statement, so one result: parseResults makes an empty one when no command completed.
    const result = parse.parseResults(statement.rowDescription ? [statement.rowDescription, ...messages] : messages, db.parsers)[0]!;
    // As pg counts: the rows a statement returned, else those it changed (PGlite counts only the latter).
    return { rows: result.rows as Row[], rowCount: statement.rowDescription ? result.rows.length : (result.affectedRows ?? 0) };
  };
}
