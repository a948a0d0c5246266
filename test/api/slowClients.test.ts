import type { FastifyInstance } from 'fastify';
import { connect, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, newKey } from '../support/app.js';
import { openTestStore } from '../support/databases.js';
import { count } from '../support/http.js';
import type { Database } from '../../src/storage/database.js';

/** Short, so the suite is quick; production uses the default of 30 s. */
const REQUEST_TIMEOUT_MS = 1_000;
/** Far more than the timeout allows: a client that finished sending would not have been cut off. */
const BYTE_EVERY_MS = 100;

interface SlowExchange {
  /** Everything the server sent back. */
  response: string;
  /** Bytes of the request the client managed to send before the server closed the connection. */
  sent: number;
  total: number;
}

/**
 * A real socket that sends `fast` at once and then `slow` one byte at a time, until the server
 * closes the connection or everything is sent (then it waits for the close or a response).
 */
function trickle(port: number, fast: string, slow: string): Promise<SlowExchange> {
  return new Promise((resolve, reject) => {
    let response = '';
    let sent = 0;
    let timer: NodeJS.Timeout | undefined;
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(fast);
      timer = setInterval(() => {
        if (sent === slow.length || socket.destroyed) return clearInterval(timer);
        socket.write(slow[sent++]!);
      }, BYTE_EVERY_MS);
    });
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (response += chunk));
    socket.on('error', () => {}); // the server may reset the connection after its answer
    socket.on('close', () => {
      clearInterval(timer);
      resolve({ response, sent: fast.length + sent, total: fast.length + slow.length });
    });
    // Three times the idle keep-alive limit: a server holding connections longer fails the test.
    setTimeout(() => {
      socket.destroy();
      reject(new Error(`connection still open after 15 s; received so far: ${response}`));
    }, 15_000).unref();
  });
}

describe('slow clients', () => {
  let app: FastifyInstance;
  let db: Database;
  let cleanup: () => Promise<void>;
  let port: number;
  let key: string;

  beforeAll(async () => {
    const opened = await openTestStore('pglite');
    ({ db, cleanup } = opened);
    ({ app } = await buildTestApp(opened.store, { REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS) }));
    key = (await newKey(opened.store)).key;
    await app.listen({ port: 0, host: '127.0.0.1' });
    port = (app.server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await app?.close();
    await cleanup?.();
  });

  const expect408 = (exchange: SlowExchange) => {
    expect(exchange.sent).toBeLessThan(exchange.total);
    expect(exchange.response).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(exchange.response).toMatch(/\r\nconnection: close\r\n/i);
    expect(JSON.parse(exchange.response.slice(exchange.response.indexOf('\r\n\r\n') + 4))).toStrictEqual({ error: 'request_timeout' });
  };

  it('answers 408 request_timeout and closes the connection when a body comes one byte at a time', async () => {
    const body = JSON.stringify({ phone: '+14155550100', name: 'x'.repeat(100) });
    const head =
      'POST /api/v1/contacts HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
      `Authorization: Bearer ${key}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`;
    expect408(await trickle(port, head, body));
    expect(await count(db, 'contacts')).toBe(0);
  });

  it('answers 408 request_timeout when the headers themselves come one byte at a time', async () => {
    expect408(await trickle(port, '', `GET /api/v1/hooks HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nX-Pad: ${'a'.repeat(60)}\r\n\r\n`));
  });

  it('closes a kept-alive connection that stays idle after its response', async () => {
    const exchange = await trickle(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n', '');
    expect(exchange.response).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(exchange.response).toMatch(/\r\nconnection: keep-alive\r\n/i);
  });
});
