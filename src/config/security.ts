/** Who may use the first-party API, what is kept secret, and where deliveries may not go. */
import { z } from 'zod';
import { SECRETS_KEY_BYTES } from '../domain/secretBox.js';
import { boolean, setting } from './setting.js';

export const securitySettings = {
  INTERNAL_API_TOKEN: z
    .string()
    .min(16, 'must be at least 16 characters')
    .optional()
    .meta(
      setting(
        'security',
        'Bearer token (16 characters or more) of the first-party API (`/internal/v1`), `/metrics` and Bull Board (`/admin/queues`, also its Basic password). Unset and embedded: the server makes one and keeps it in DATA_DIR/internal-api-token (mode 0600), where the CLI finds it; unset with DATABASE_URL: those routes answer 404.',
        { example: 'change-me-to-a-long-random-string' },
      ),
    ),
  SECRETS_KEY: z
    .string()
    .regex(/^[A-Za-z0-9+/_-]+={0,2}$/, 'must be base64')
    .transform((text) => Buffer.from(text, 'base64'))
    .refine((key) => key.length === SECRETS_KEY_BYTES, `must decode to ${SECRETS_KEY_BYTES} bytes (openssl rand -base64 32)`)
    .optional()
    .meta(
      setting(
        'security',
        '32 random bytes, base64 (`openssl rand -base64 32`): hook signing secrets are then stored encrypted (AES-256-GCM). The same in every process; once set, it cannot be removed or changed. Unset: stored in plaintext.',
      ),
    ),
  DELIVERY_ALLOW_PRIVATE_NETWORKS: boolean
    .default(false)
    .meta(
      setting(
        'security',
        'Lifts the SSRF guard, so a development server can deliver to `contact-hooks listen` on loopback (trusting its certificates in DATA_DIR/listen); refused when NODE_ENV=production.',
      ),
    ),
};
