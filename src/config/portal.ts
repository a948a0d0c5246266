/** The owner's portal: the origin its links are made on, and who may frame it. */
import { z } from 'zod';
import { setting } from './setting.js';

/** A web origin, as a CSP source or a link's base: scheme, host (a leading `*.` allowed where said), port; no path. */
const ORIGIN = /^https?:\/\/(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*)(:\d{1,5})?$/;
const WILDCARD_ORIGIN = /^https?:\/\/(\*\.)?(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*)(:\d{1,5})?$/;

export const portalSettings = {
  PUBLIC_BASE_URL: z
    .string()
    .transform((url) => url.replace(/\/+$/, ''))
    .pipe(z.string().regex(ORIGIN, 'must be an origin such as https://hooks.example.com, without a path'))
    .optional()
    .meta(
      setting('server', "The origin the owner's portal links are made on; unset: the origin the platform's request came to.", {
        example: 'https://hooks.example.com',
      }),
    ),
  PORTAL_FRAME_ANCESTORS: z
    .string()
    .transform((list) => list.split(/[\s,]+/).filter(Boolean))
    .pipe(z.array(z.string().regex(WILDCARD_ORIGIN, 'must be origins such as https://app.example.com, space- or comma-separated')).min(1))
    .optional()
    .meta(
      setting('security', "Origins allowed to frame the owner's portal, space- or comma-separated (`https://*.example.com` allowed); unset: none may.", {
        example: 'https://app.example.com',
      }),
    ),
};
