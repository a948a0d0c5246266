/**
 * The HTTPS receiver, run as its own process (forked by receiver.ts) so that neither the load
 * generator nor the raw reference client shares its event loop. It records when each
 * (path, event) first arrived on the monotonic clock, which is shared by all processes.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';

export const nowMs = () => Number(process.hrtime.bigint()) / 1e6;

let count = 0;
let duplicates = 0;
let firstAt = 0;
let lastAt = 0;
let times = new Map<string, number>();

const server = createServer(
  { key: readFileSync(process.env.RECEIVER_KEY_PATH!), cert: readFileSync(process.env.RECEIVER_CERT_PATH!), keepAliveTimeout: 60_000 },
  (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const at = nowMs();
      let id: unknown;
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data?: Record<string, unknown> };
        id = body.data?.conversation_id ?? body.data?.phone ?? body.data?.id;
      } catch {
        id = undefined;
      }
      const key = `${req.url ?? ''} ${String(id)}`;
      if (times.has(key)) duplicates++;
      else times.set(key, at);
      if (count === 0) firstAt = at;
      lastAt = at;
      count++;
      res.writeHead(200, { 'content-length': '0' });
      res.end();
    });
  },
);
server.on('connection', (socket) => socket.on('error', () => {}));
server.on('tlsClientError', () => {});

process.on('message', (message: { type: string; prefix?: string }) => {
  if (message.type === 'reset') {
    count = duplicates = firstAt = lastAt = 0;
    times = new Map();
    process.send!({ type: 'reset' });
  } else if (message.type === 'stats') {
    process.send!({ type: 'stats', count, duplicates, firstAt, lastAt });
  } else if (message.type === 'times') {
    const prefix = message.prefix ?? '';
    const entries = [...times].filter(([key]) => key.startsWith(prefix));
    process.send!({ type: 'times', entries });
  } else if (message.type === 'close') {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  }
});

server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.send!({ type: 'listening', port: typeof address === 'object' && address ? address.port : 0 });
});
