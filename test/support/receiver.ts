import { startHttpsServer } from '../../kit/httpsServer.js';
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

/**
 * HTTPS receiver in the test's own process, on the kit's HTTPS server and the test certificate:
 * records every request whole (headers and body, for signature and payload checks) and answers
 * 200 unless `respond` says otherwise.
 */
export async function startReceiver(opts: ReceiverOptions = {}): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const waiters = new Set<() => void>();

  const https = await startHttpsServer(createTestCertificate(), (req, res, body) => {
    const received: ReceivedRequest = {
      method: req.method ?? '',
      path: req.url ?? '',
      headers: req.headers,
      body: body.toString('utf8'),
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

  return {
    url: https.url,
    port: https.port,
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
      return https.close();
    },
  };
}
