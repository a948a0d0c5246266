import type { DeliveryStatus } from './delivery.js';

/**
 * Auto-disable: a hook is disabled once every delivery to it for HOOK_DISABLE_AFTER has failed,
 * and at least HOOK_DISABLE_MIN_FAILURES of them. A success ends the streak; so does enabling.
 */
export interface HookDisableRule {
  afterMs: number;
  minFailures: number;
}

export const HOOK_STATES = ['active', 'disabled'] as const;
export type HookState = (typeof HOOK_STATES)[number];

/** Why a hook was disabled: the only reason so far is the rule above. */
export const DISABLED_REASONS = ['failing'] as const;
export type DisabledReason = (typeof DISABLED_REASONS)[number];

/** Outcomes that end a streak, and those that extend it (429 and 503 are `failed` too). Expired was never sent: neither. */
export const SUCCESS_STATUS = 'delivered' satisfies DeliveryStatus;
export const FAILURE_STATUSES = ['failed', 'refused', 'unknown'] as const satisfies readonly DeliveryStatus[];

/** The statuses last_24h counts: every outcome a delivery can end with. */
export const OUTCOME_STATUSES = ['delivered', 'failed', 'refused', 'expired', 'unknown'] as const satisfies readonly DeliveryStatus[];
export type OutcomeStatus = (typeof OUTCOME_STATUSES)[number];
