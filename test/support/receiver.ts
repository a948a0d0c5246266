import { createServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { createTestCertificate } from './tls.js';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  receivedAt: number;
}

export interface ReceiverResponse {
  status?: number;
  headers?: Record<string, string>;
  delayMs?: number;
  body?: string | Buffer;
  /** Hold the request open until close(). */
  neverRespond?: boolean;
}

export interface ReceiverOptions {
  respond?: (req: ReceivedRequest) => ReceiverResponse;
}

export interface Receiver {
  /** e.g. https://127.0.0.1:PORT; append paths so one receiver serves many subscriptions. */
  url: string;
  port: number;
  requests: ReceivedRequest[];
  waitFor(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** HTTPS receiver on 127.0.0.1 using the test certificate; answers 200 unless `respond` says otherwise. */
export async function startReceiver(opts: ReceiverOptions = {}): Promise<Receiver> {
  const { key, cert } = createTestCertificate();
  const requests: ReceivedRequest[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const waiters = new Set<() => void>();

  const server = createServer({ key, cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const received: ReceivedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        receivedAt: Date.now(),
      };
      requests.push(received);
      for (const wake of waiters) wake();
      const answer = opts.respond?.(received) ?? {};
      if (answer.neverRespond) return;
      const send = (): void => {
        res.writeHead(answer.status ?? 200, answer.headers);
        res.end(answer.body);
      };
      if (!answer.delayMs) return send();
      const timer = setTimeout(() => {
        timers.delete(timer);
        send();
      }, answer.delayMs);
      timers.add(timer);
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    // Clients that hang up mid-response (timeouts, capped body reads) are expected in tests.
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('tlsClientError', () => {});

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `https://127.0.0.1:${port}`,
    port,
    requests,
    waitFor(count, timeoutMs = 5000) {
      if (requests.length >= count) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const check = (): void => {
          if (requests.length < count) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`receiver got ${requests.length} of ${count} requests within ${timeoutMs}ms`));
        }, timeoutMs);
        waiters.add(check);
      });
    },
    close() {
      for (const timer of timers) clearTimeout(timer);
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
