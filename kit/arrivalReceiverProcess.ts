/**
 * An HTTPS receiver that counts arrivals, run as its own process (forked by arrivalReceiver.ts) so
 * that no load generator, raw reference client or test shares its event loop: its clock is what a
 * remote receiver's would be. It stands on the kit's
 * HTTPS server and records when each (path, event) first arrived, on the monotonic clock every
 * process shares, counted per channel (a path's first segment, such as /d of /d or /f of /f/12).
 */
import { readFileSync } from 'node:fs';
import { startHttpsServer } from './httpsServer.js';

const nowMs = () => Number(process.hrtime.bigint()) / 1e6;

interface Tally {
  count: number;
  duplicates: number;
  firstAt: number;
  lastAt: number;
}

const emptyTally = (): Tally => ({ count: 0, duplicates: 0, firstAt: 0, lastAt: 0 });

const channelOf = (path: string) => `/${path.split('/')[1] ?? ''}`;

/** The event a body carries: a call's conversation_id, a contact's phone; undefined for a body that is not ours. */
function eventIdOf(body: Buffer): unknown {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { data?: Record<string, unknown> };
    return parsed.data?.conversation_id ?? parsed.data?.phone ?? parsed.data?.id;
  } catch {
    return undefined; // counted all the same, under the key "<path> undefined"
  }
}

function count(tally: Tally, at: number, duplicate: boolean) {
  if (tally.count === 0) tally.firstAt = at;
  tally.lastAt = at;
  tally.count++;
  if (duplicate) tally.duplicates++;
}

/** Serves until told to close; everything received since the last reset lives here. */
async function serve() {
  let received = { all: emptyTally(), channels: new Map<string, Tally>(), times: new Map<string, number>() };
  const https = await startHttpsServer(
    { key: readFileSync(process.env.RECEIVER_KEY_PATH!, 'utf8'), cert: readFileSync(process.env.RECEIVER_CERT_PATH!, 'utf8') },
    (req, res, body) => {
      const at = nowMs();
      const path = req.url ?? '';
      const key = `${path} ${String(eventIdOf(body))}`;
      const duplicate = received.times.has(key);
      if (!duplicate) received.times.set(key, at);
      const channel = channelOf(path);
      const tally = received.channels.get(channel) ?? emptyTally();
      received.channels.set(channel, tally);
      count(received.all, at, duplicate);
      count(tally, at, duplicate);
      res.writeHead(200, { 'content-length': '0' });
      res.end();
    },
    { keepAliveTimeout: 60_000 },
  );

  process.on('message', (message: { type: string; prefix?: string; channel?: string }) => {
    if (message.type === 'reset') {
      received = { all: emptyTally(), channels: new Map(), times: new Map() };
      process.send!({ type: 'reset' });
    } else if (message.type === 'stats') {
      const tally = message.channel === undefined ? received.all : (received.channels.get(message.channel) ?? emptyTally());
      process.send!({ type: 'stats', ...tally });
    } else if (message.type === 'times') {
      const prefix = message.prefix ?? '';
      process.send!({ type: 'times', entries: [...received.times].filter(([key]) => key.startsWith(prefix)) });
    } else if (message.type === 'close') {
      void https.close().then(() => process.exit(0));
    }
  });

  process.send!({ type: 'listening', port: https.port });
}

await serve();
