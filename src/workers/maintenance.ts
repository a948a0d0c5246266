import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { hookDisableRule, type Config } from '../config.js';
import type { HookDisableRule } from '../domain/hookHealth.js';
import type { Metrics } from '../observability/metrics.js';
import type { DisabledHook } from '../storage/hookHealth.js';
import type { Store } from '../storage/store.js';
import { AUTOVACUUM_THRESHOLDS, type VacuumThresholds } from '../storage/vacuum.js';
import { reportDisabled } from './hookDisables.js';

const DAY_MS = 86_400_000;
/** Past the delivery timeout, this long again before a claim still `sending` is declared unknown. */
export const STUCK_GRACE_MS = 60_000;

export interface MaintenanceSettings {
  /** RETENTION_DAYS in ms. */
  retentionMs: number;
  /** A claim still `sending` this long after it was made becomes `unknown`. */
  stuckAfterMs: number;
  /** DELIVERY_MAX_WAIT: a delivery still queued this long after its event becomes `expired`. */
  maxWaitMs: number;
  /** An unknown outcome is a failure: it may disable its hook (HOOK_DISABLE_AFTER, HOOK_DISABLE_MIN_FAILURES). */
  disableRule: HookDisableRule;
  /** Rows per statement: small, so no statement holds locks for long or delays requests. */
  batch?: number;
  /** Pause between two statements, so requests interleave (PGlite runs one statement at a time). */
  pauseMs?: number;
  /** Statements per table per pass; what is left waits for the next pass. */
  maxBatchesPerPass?: number;
  /** When PGlite's tables are vacuumed (PostgreSQL's autovacuum defaults). */
  vacuum?: VacuumThresholds;
}

/** The settings the processes run with, from their configuration. */
export const maintenanceSettings = (
  config: Pick<Config, 'RETENTION_DAYS' | 'DELIVERY_TIMEOUT_MS' | 'DELIVERY_MAX_WAIT' | 'HOOK_DISABLE_AFTER' | 'HOOK_DISABLE_MIN_FAILURES'>,
): MaintenanceSettings => ({
  retentionMs: config.RETENTION_DAYS * DAY_MS,
  stuckAfterMs: config.DELIVERY_TIMEOUT_MS + STUCK_GRACE_MS,
  maxWaitMs: config.DELIVERY_MAX_WAIT,
  disableRule: hookDisableRule(config),
});

/**
 * A pass runs often enough for the retention to be met closely, and at most once a minute: a
 * tenth of the retention, between one second and a minute.
 */
const passInterval = (retentionMs: number) => Math.min(60_000, Math.max(1_000, Math.floor(retentionMs / 10)));

/**
 * One maintenance pass: declares stuck claims unknown and deliveries queued past
 * DELIVERY_MAX_WAIT expired (the relay no longer reads their days), keeps the day partitions of the days
 * ahead, then deletes what retention allows, in an order that lets one pass finish a chain (a
 * delivery, then its event; a deleted subscription, then its revoked key). Deliveries and their
 * events go by whole days (src/storage/partitions.ts), once the last row of a day is past
 * RETENTION_DAYS; a retention shorter than a day (trials, tests) never has a whole day past it,
 * so then they are also deleted row by row. On PGlite it last vacuums the tables that need it,
 * as PostgreSQL's autovacuum does on a server. Returns what it changed, by kind, and the hooks
 * whose unknown outcomes disabled them.
 */
export async function runMaintenancePass(store: Store, settings: MaintenanceSettings, signal?: AbortSignal) {
  const { retentionMs, stuckAfterMs, maxWaitMs, disableRule, batch = 500, pauseMs = 10, maxBatchesPerPass = 200, vacuum = AUTOVACUUM_THRESHOLDS } = settings;
  /** Statement after statement until one changes fewer than `batch` rows; a shutdown stops between two. */
  const repeat = async (work: (limit: number) => Promise<number>) => {
    let total = 0;
    for (let i = 0; i < maxBatchesPerPass && !signal?.aborted; i++) {
      const changed = await work(batch);
      total += changed;
      if (changed < batch) break;
      await sleep(pauseMs, undefined, { signal }).catch(() => undefined); // an abort ends the loop above
    }
    return total;
  };
  const { retention, partitions } = store;
  const disabled: DisabledHook[] = [];
  const markUnknown = async (limit: number) => {
    const marked = await retention.markStuckUnknown(stuckAfterMs, limit, disableRule);
    disabled.push(...marked.disabled);
    return marked.changed;
  };
  const underADay = retentionMs < DAY_MS;
  const changed = {
    unknown: await repeat(markUnknown),
    expired: await repeat((limit) => retention.expireUnsent(maxWaitMs, limit)),
    partitionsCreated: (await partitions.ensure()).length,
    partitionsDropped: (await partitions.dropBefore((await partitions.now()) - retentionMs)).length,
    deliveries: underADay ? await repeat((limit) => retention.pruneDeliveries(retentionMs, limit)) : 0,
    events: underADay ? await repeat((limit) => retention.pruneEvents(retentionMs, limit)) : 0,
    calls: await repeat((limit) => retention.pruneCalls(retentionMs, limit)),
    hooks: await repeat((limit) => retention.pruneDeletedHooks(retentionMs, limit)),
    keys: await repeat((limit) => retention.pruneRevokedKeys(retentionMs, limit)),
    outcomeHours: await repeat((limit) => retention.pruneOutcomeHours(limit)),
    portalSessions: await repeat((limit) => store.portalSessions.pruneExpired(limit)),
    vacuumed: store.db.engine === 'pglite' ? await vacuumTables(store, vacuum, signal) : 0,
  };
  return { changed, disabled };
}

/**
 * Vacuums each table past a threshold, one statement each, so that on PGlite's one connection
 * the engine's claims go between two (pglite.ts); a shutdown stops between two. Returns how many.
 */
async function vacuumTables(store: Store, thresholds: VacuumThresholds, signal?: AbortSignal) {
  const tables = await store.vacuum.due(thresholds);
  let vacuumed = 0;
  for (const table of tables) {
    if (signal?.aborted) break;
    await store.vacuum.vacuum(table);
    vacuumed++;
  }
  return vacuumed;
}

/**
 * The periodic maintenance loop, in every worker and in the embedded process. Running it in
 * several processes at once is safe: each statement skips rows another one holds. The claims it
 * declares unknown are counted as deliveries ending `unknown` (an operator's alert).
 */
export function startMaintenance(store: Store, log: Logger, settings: MaintenanceSettings, metrics: Pick<Metrics, 'deliveries' | 'hooksDisabled'>) {
  const stopping = new AbortController();
  let running: Promise<void> | undefined;
  const pass = () =>
    runMaintenancePass(store, settings, stopping.signal).then(
      ({ changed, disabled }) => {
        metrics.deliveries.inc({ outcome: 'unknown' }, changed.unknown);
        metrics.deliveries.inc({ outcome: 'expired' }, changed.expired);
        if (Object.values(changed).some((count) => count > 0)) log.info(changed, 'maintenance: stuck claims marked unknown, old rows pruned, tables vacuumed');
        reportDisabled(disabled, log, metrics);
      },
      (error: unknown) => log.warn({ err: error }, 'maintenance pass failed; trying again next pass'),
    );
  const timer = setInterval(() => {
    running ??= pass().finally(() => (running = undefined));
  }, passInterval(settings.retentionMs));
  return {
    /** Stops between two statements, without waiting for the rest of a pass. */
    async stop() {
      clearInterval(timer);
      stopping.abort();
      await running;
    },
  };
}
