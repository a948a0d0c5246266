/**
 * The fan-out figure's reference: the same POSTs the service sends, straight from this process
 * with undici (no queue, no database, no pacing), to the same receiver.
 */
import { randomUUID } from 'node:crypto';
import { Agent, request } from 'undici';
import type { BenchContext } from '../context.js';
import { SERVICE_DEFAULTS } from '../settings.js';
import { callBody, runCount } from '../support/clients.js';
import { monotonicMs } from '../support/load.js';

const eventBody = () => JSON.stringify({ event: 'new_conversation', data: JSON.parse(callBody(randomUUID())) as unknown });

/**
 * POSTs as a worker sends them: at most DELIVERY_CONCURRENCY in flight, the rest waiting their
 * turn. With no bound, a rate the receiver fell behind on opened a new TLS connection for every
 * POST that found none free, and the handshakes took the cores: the open-loop reference measured
 * a p50 of 2.4 to 3.1 s at 1,026 to 1,351/s, where the service itself delivered in 19 to 39 ms.
 */
async function withAgent<T>(ctx: BenchContext, work: (post: (path: string, body?: string) => Promise<void>) => Promise<T>): Promise<T> {
  const agent = new Agent({ connect: { ca: ctx.certificate.cert }, keepAliveTimeout: 60_000, connections: SERVICE_DEFAULTS.DELIVERY_CONCURRENCY });
  const post = async (path: string, body = eventBody()) => {
    const response = await request(`${ctx.receiver.url}${path}`, {
      dispatcher: agent,
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', 'user-agent': 'bench-raw' },
    });
    await response.body.text();
    if (response.statusCode !== 200) throw new Error(`raw POST: ${response.statusCode}`);
  };
  try {
    return await work(post);
  } finally {
    await agent.close();
    await ctx.receiver.reset();
  }
}

/** Time (ms) for `total` raw POSTs to distinct paths with `concurrency` in flight: the fan-out reference. */
export const rawPostBatch = (ctx: BenchContext, total: number, concurrency: number) =>
  withAgent(ctx, async (post) => {
    const body = eventBody();
    const t0 = monotonicMs();
    await runCount(concurrency, total, (index) => post(`/rf/${index}`, body));
    return monotonicMs() - t0;
  });
