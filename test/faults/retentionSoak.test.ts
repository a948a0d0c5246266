import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack } from '../support/stack.js';
import { sleep, waitUntil, withPostgresAndRedis } from '../support/processes.js';

const RETENTION_S = 3;
const CALLS_PER_SECOND = 10; // each a voicemail: two events, two deliveries
const DURATION_S = 30;
const TABLES = ['calls', 'events', 'deliveries'] as const;

type Sample = { at: number } & Record<(typeof TABLES)[number], number>;

const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))]!;

/**
 * Soak: constant load on the production shape (web, one worker, PostgreSQL, Redis) with a
 * retention of a few seconds. Table sizes level off at what the retention window holds instead
 * of growing with everything ever written: the last third of the run holds no more rows than
 * the middle third, and far fewer than were written.
 */
describe.runIf(withPostgresAndRedis)('table sizes under constant load with RETENTION_DAYS', () => {
  let stack: Awaited<ReturnType<typeof startStack>>;

  beforeAll(async () => {
    stack = await startStack({ mode: 'workers', workers: 1, env: { RETENTION_DAYS: String(RETENTION_S / 86_400) } });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it(`stays flat over ${DURATION_S} s of ${CALLS_PER_SECOND} calls/s`, async () => {
    await stack.subscribe('/conversations', 'new_conversation');
    await stack.subscribe('/missed', 'missed_call');
    const call = { channel: 'voice', outcome: 'voicemail', spam: false, caller_name: 'Ann', caller_number: '+14155550100', summary: 'Call me back' };

    const started = Date.now();
    const samples: Sample[] = [];
    const latencies: number[] = [];
    const answers: Array<Promise<number>> = [];
    const sampler = (async () => {
      while (Date.now() - started < DURATION_S * 1000) {
        const [row] = await stack.sql(`SELECT ${TABLES.map((table) => `(SELECT count(*)::int FROM ${table}) AS ${table}`).join(', ')}`);
        samples.push({ at: (Date.now() - started) / 1000, ...row });
        await sleep(1000);
      }
    })();
    // Open loop: one call every 1/CALLS_PER_SECOND s, whether or not the previous one was answered.
    for (let sent = 0; Date.now() - started < DURATION_S * 1000; sent++) {
      const sentAt = Date.now();
      answers.push(
        stack.http.internal('POST', '/accounts/acme/calls', { ...call, conversation_id: randomUUID() }).then((response) => {
          latencies.push(Date.now() - sentAt);
          return response.status;
        }),
      );
      await sleep(Math.max(0, started + ((sent + 1) * 1000) / CALLS_PER_SECOND - Date.now()));
    }
    const statuses = await Promise.all(answers);
    await sampler;

    const written = statuses.length;
    expect(statuses.every((status) => status === 202)).toBe(true);
    const most = (table: (typeof TABLES)[number], from: number, to: number) =>
      Math.max(...samples.filter((sample) => sample.at >= from && sample.at < to).map((sample) => sample[table]));
    const third = DURATION_S / 3;
    const report = TABLES.map((table) => `${table} max ${most(table, third, 2 * third)} then ${most(table, 2 * third, DURATION_S + 1)}`);
    console.info(
      `[retention soak] ${written} calls (${2 * written} events) in ${DURATION_S} s; ${report.join('; ')}; ` +
        `call POST p50 ${percentile(latencies, 0.5)} ms, p99 ${percentile(latencies, 0.99)} ms\n` +
        samples.map((sample) => `  t=${sample.at.toFixed(0)}s calls=${sample.calls} events=${sample.events} deliveries=${sample.deliveries}`).join('\n'),
    );
    for (const table of TABLES) {
      const writtenRows = table === 'calls' ? written : 2 * written;
      // Flat: the last third holds no more than the middle third (with room for jitter)...
      expect(most(table, 2 * third, DURATION_S + 1), table).toBeLessThanOrEqual(1.5 * most(table, third, 2 * third) + 10);
      // ...and a small part of everything written.
      expect(most(table, 2 * third, DURATION_S + 1), table).toBeLessThan(writtenRows / 3);
    }
    // Pruning took nothing still needed: every event reaches its subscription.
    await waitUntil(() => stack.received('/conversations').length === written && stack.received('/missed').length === written, 30_000);
  });
});
