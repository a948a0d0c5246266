/**
 * An HTTPS receiver that counts arrivals, run as its own process (forked by arrivalReceiver.ts) so
 * that no load generator, raw reference client or test shares its event loop: its clock is what a
 * remote receiver's would be. It stands on the kit's
 * HTTPS server and records when each (path, event) first arrived, on the monotonic clock every
 * process shares, counted per channel (a path's first segment, such as /d of /d or /f of /f/12).
 */
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { startHttpsServer } from './httpsServer.js';

const nowMs = () => Number(process.hrtime.bigint()) / 1e6;

interface Tally {
  count: number;
  duplicates: number;
  firstAt: number;
  lastAt: number;
}

const emptyTally = (): Tally => ({ count: 0, duplicates: 0, firstAt: 0, lastAt: 0 });

const nothingReceived = () => ({ all: emptyTally(), channels: new Map<string, Tally>(), times: new Map<string, number>() });

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

/**
 * One POST to itself before it reports listening. A fresh process's first request runs cold code:
 * from its handshake to its body, 3-36 ms on this machine under load, against under 1 ms for the
 * connections after it. That would land on the first POST of whatever is measured (the first of
 * a paced target's sliding second), where the receiver stands for a remote one long serving.
 */
function warmUp(port: number, ca: string) {
  return new Promise<void>((resolve, reject) => {
    const warming = request({ host: '127.0.0.1', port, path: '/warm-up', method: 'POST', ca, agent: false }, (res) => {
      res.resume();
      res.on('end', resolve);
    });
    warming.on('error', reject);
    warming.end('{}');
  });
}

/** Serves until told to close; everything received since the last reset lives here. */
async function serve() {
  let received = nothingReceived();
  const cert = readFileSync(process.env.RECEIVER_CERT_PATH!, 'utf8');
  const https = await startHttpsServer(
    { key: readFileSync(process.env.RECEIVER_KEY_PATH!, 'utf8'), cert },
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
  await warmUp(https.port, cert);
  received = nothingReceived();

  process.on('message', (message: { type: string; prefix?: string; channel?: string }) => {
    if (message.type === 'reset') {
      received = nothingReceived();
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
