import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Config } from '../config.js';
import { verifySignature, type SignatureCheck } from '../domain/signature.js';
import { lockHolder } from '../storage/dataDirLock.js';
import { storeListenCertificate } from '../storage/listenCertificates.js';
import type { ListenCommand } from './args.js';
import { createListenCertificate } from './listenCertificate.js';
import { describeUnexpected } from './output.js';
import { publicApi, type ListenHook, type LoggedDelivery, type PublicApi } from './publicApi.js';

/** How often the subscriptions' delivery logs are read, to explain deliveries that never arrive. */
const LOG_POLL_MS = 1_000;
/** Deliveries still on their way; every other status that is not `delivered` is a delivery lost. */
const PENDING = new Set(['queued', 'sending', 'delivered']);

/** Status lines go to stderr, so stdout carries the deliveries alone (one JSON line each with --json). */
const note = (line: string) => process.stderr.write(`${line}\n`);

/**
 * `contact-hooks listen`: a local HTTPS receiver for development. It subscribes each event with
 * the key, prints each delivery with its signature checked against that subscription's secret,
 * explains deliveries that never arrive (from the delivery log), and unsubscribes when it stops.
 * Resolves with the exit status: 1 when a subscription could not be removed.
 */
export async function listen(command: ListenCommand, config: Config): Promise<number> {
  const serviceUrl = command.server ?? serviceAddress(config);
  const api = publicApi(serviceUrl, command.key);
  const certificate = createListenCertificate();
  const stop = stopSignal();
  const hooks = new Map<string, ListenHook>(); // by path: /<event>
  const received = new Set<string>();
  let verified = 0;

  const receiver = createServer({ key: certificate.key, cert: certificate.cert }, (request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const hook = request.method === 'POST' ? hooks.get(request.url ?? '') : undefined;
      if (!hook) return void response.writeHead(404).end();
      const check = receive(hook, request, Buffer.concat(chunks).toString('utf8'), command.json);
      received.add(String(request.headers['webhook-id']));
      if (check === 'verified') verified++;
      if (command.exitAfter !== undefined && verified >= command.exitAfter) response.on('finish', stop.now);
      answer(response, check);
    });
  });
  // Clients that hang up mid-request say nothing about this receiver.
  receiver.on('clientError', (_error, socket) => socket.destroy());
  receiver.on('tlsClientError', () => {});

  const trust = storeListenCertificate(config.DATA_DIR, certificate.cert);
  let watch: { stop(): void } | undefined;
  let unsubscribed: boolean;
  try {
    await new Promise<void>((resolve, reject) => receiver.once('error', reject).listen(command.port, '127.0.0.1', resolve));
    const url = `https://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    for (const event of command.events) {
      const hook = await api.subscribe(event, `${url}/${event}`);
      hooks.set(`/${event}`, hook);
      note(`Subscribed ${event} (hook ${hook.id}) to ${url}/${event}`);
    }
    note(`Ready: listening on ${url} for the service at ${serviceUrl}; each delivery is printed with its signature checked. Ctrl-C stops and unsubscribes.`);
    watch = watchDeliveryLogs(api, [...hooks.values()], received, trust.path);
    await stop.promise;
  } finally {
    // Also when a subscription failed part way: the ones already made are taken back.
    watch?.stop();
    unsubscribed = await unsubscribeAll(api, [...hooks.values()]);
    trust.remove();
    receiver.closeAllConnections();
    receiver.close();
  }
  return unsubscribed ? 0 : 1;
}

/** The server holding DATA_DIR when there is one (embedded), else this machine's PORT. */
function serviceAddress(config: Config) {
  const holder = config.DATABASE_URL ? undefined : lockHolder(config.DATA_DIR);
  return holder?.url ?? `http://127.0.0.1:${config.PORT}`;
}

/** Resolves on SIGINT or SIGTERM, or when asked; a second signal ends the process at once. */
function stopSignal() {
  let now = () => {};
  const promise = new Promise<void>((resolve) => (now = resolve));
  let signals = 0;
  const onSignal = () => {
    if (++signals > 1) process.exit(130);
    now();
  };
  process.on('SIGINT', onSignal).on('SIGTERM', onSignal);
  return { promise, now: () => now() };
}

/** Prints one delivery: a line of text, or a JSON line with --json. */
function receive(hook: ListenHook, request: IncomingMessage, body: string, json: boolean): SignatureCheck {
  const header = (name: string) => [request.headers[name]].flat()[0];
  const headers = { 'webhook-id': header('webhook-id'), 'webhook-timestamp': header('webhook-timestamp'), 'webhook-signature': header('webhook-signature') };
  const check = verifySignature(hook.secret, headers, body, Date.now() / 1000);
  const receivedAt = new Date().toISOString();
  if (json) {
    let parsed: unknown = body;
    try {
      parsed = JSON.parse(body);
    } catch {
      // Not JSON: shown as the text it is.
    }
    process.stdout.write(
      `${JSON.stringify({ received_at: receivedAt, event: hook.event, webhook_id: headers['webhook-id'] ?? null, signature: check, body: parsed })}\n`,
    );
  } else {
    const signature = check === 'verified' ? 'signature verified' : `signature NOT verified (${check.replace('_', ' ')})`;
    process.stdout.write(`${receivedAt}  ${hook.event}  ${headers['webhook-id'] ?? '(no webhook-id)'}  ${signature}  ${body}\n`);
  }
  return check;
}

/** 200 to a delivery whose signature checks out, as a receiver should; 400 otherwise. */
function answer(response: ServerResponse, check: SignatureCheck) {
  const verified = check === 'verified';
  response
    .writeHead(verified ? 200 : 400, { 'content-type': 'application/json' })
    .end(JSON.stringify(verified ? { ok: true } : { error: 'invalid_signature' }));
}

/**
 * Reads each subscription's delivery log and says, once per event, why a delivery did not
 * arrive: what a newcomer needs when the service refuses loopback or does not trust the receiver.
 */
function watchDeliveryLogs(api: PublicApi, hooks: ListenHook[], received: Set<string>, certificatePath: string) {
  const explained = new Set<string>();
  const failures = new Set<string>();
  const poll = async () => {
    for (const hook of hooks) {
      let deliveries: LoggedDelivery[];
      try {
        deliveries = await api.deliveries(hook.id);
      } catch (error) {
        const message = describeUnexpected(error);
        if (!failures.has(message)) note(`Could not read the delivery log of hook ${hook.id}: ${message}`);
        failures.add(message);
        continue;
      }
      for (const delivery of deliveries) {
        if (PENDING.has(delivery.status) || received.has(delivery.event_id) || explained.has(delivery.event_id)) continue;
        explained.add(delivery.event_id);
        note(
          `${delivery.event} ${delivery.event_id} did not arrive: ${delivery.status}${delivery.error ? ` (${delivery.error})` : ''}. ${explain(delivery, certificatePath)}`,
        );
      }
    }
  };
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const next = () => {
    if (!stopped) timer = setTimeout(() => void poll().finally(next), LOG_POLL_MS);
  };
  next();
  return {
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

function explain(delivery: LoggedDelivery, certificatePath: string) {
  if (delivery.status === 'refused') {
    return 'The service refuses private addresses such as 127.0.0.1: start it with DELIVERY_ALLOW_PRIVATE_NETWORKS=true (development only).';
  }
  if (delivery.error === 'tls_error') {
    return `The service did not trust this receiver's certificate, which listen left in ${certificatePath}: run the service with the same DATA_DIR.`;
  }
  return 'The delivery log (GET /api/v1/hooks/{id}/deliveries) has the details.';
}

/** Deletes the subscriptions; false (each one named) when some could not be. */
async function unsubscribeAll(api: PublicApi, hooks: ListenHook[]) {
  let all = true;
  for (const hook of hooks) {
    try {
      await api.unsubscribe(hook.id);
      note(`Unsubscribed ${hook.event} (hook ${hook.id})`);
    } catch (error) {
      all = false;
      note(`Could not unsubscribe ${hook.event} (hook ${hook.id}): ${describeUnexpected(error)}; delete it with DELETE /api/v1/hooks/${hook.id}`);
    }
  }
  return all;
}
