/** How long the stored history is kept. */
import { z } from 'zod';
import { setting } from './setting.js';

export const retentionSettings = {
  RETENTION_DAYS: z.coerce
    .number()
    .positive()
    .default(30)
    .meta(
      setting(
        'retention',
        'Days events, delivery logs, calls and revoked keys are kept (fractions allowed, e.g. `0.5`); contacts are kept for good, and work not yet done until it is done.',
      ),
    ),
};
