import type { Logger } from 'pino';
import type { Metrics } from '../observability/metrics.js';
import type { DisabledHook } from '../storage/hookHealth.js';

/**
 * Tells operators of the hooks a write just disabled (the rule in src/domain/hookHealth.ts): a
 * warning each, and the disable counter. Their owners see it on the hook (state, health).
 */
export function reportDisabled(hooks: DisabledHook[], log: Pick<Logger, 'warn'>, metrics: Pick<Metrics, 'hooksDisabled'>) {
  for (const hook of hooks) {
    metrics.hooksDisabled.inc();
    log.warn(
      { hookId: hook.id, accountId: hook.account_id, consecutiveFailures: hook.consecutive_failures, failingSince: hook.failing_since },
      'hook disabled: every delivery to it failed for HOOK_DISABLE_AFTER; its events are skipped until it is enabled',
    );
  }
}
