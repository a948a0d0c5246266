import type { BenchContext } from '../context.js';
import { serviceClient } from './clients.js';
import type { Service } from './services.js';

/**
 * The production shape on the run's PostgreSQL database and Redis prefix: a web process that
 * only produces, and workers that fan out and deliver, all with `env` on top of the run's.
 * Workers can be stopped and started again (a backlog builds while none runs).
 */
export async function startPostgresStack(ctx: BenchContext, env: Record<string, string>, labels: { web: string; worker: string }, workerCount: number) {
  const serviceEnv = { ...ctx.postgresEnv, ...env };
  const web = await ctx.services.start('web', serviceEnv, labels.web);
  const workers: Service[] = [];
  /** `together`: all at once rather than one after another, so that they begin draining a backlog close together. */
  const startWorkers = async (count: number, { together = false } = {}) => {
    if (together) {
      workers.push(...(await Promise.all(Array.from({ length: count }, () => ctx.services.start('worker', serviceEnv, labels.worker)))));
      return;
    }
    for (let i = 0; i < count; i++) workers.push(await ctx.services.start('worker', serviceEnv, labels.worker));
  };
  const stopWorkers = async () => {
    for (const worker of workers.splice(0)) await ctx.services.stop(worker);
  };
  await startWorkers(workerCount);
  return {
    web,
    client: serviceClient(web.url, ctx.token),
    startWorkers,
    stopWorkers,
    async stop() {
      await stopWorkers();
      await ctx.services.stop(web);
    },
  };
}

export type PostgresStack = Awaited<ReturnType<typeof startPostgresStack>>;
