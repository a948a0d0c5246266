import type { PortalSession } from '../../services/portal.js';
import { html } from './html.js';
import { page } from './layout.js';

/** What each refusal tells the owner, by the error's code; anything else is said by its status. */
const MESSAGES: Record<string, [string, string]> = {
  link_used: ['This link was used already', 'Each portal link opens once. Ask for a new link where you found this one.'],
  link_expired: ['This link has expired', 'Ask for a new link where you found this one.'],
  unauthorized: ['You are not signed in', 'Your portal session has ended, or this browser has none. Ask for a new link where you found the last one.'],
  forbidden: ['Not allowed', 'This session can view this account’s integrations but not change them, or the form was stale. Reload the page and try again.'],
  not_found: ['Not found', 'There is nothing here, or it is not this account’s.'],
  unavailable: ['Try again in a moment', 'The service could not reach its database. Nothing was changed.'],
  internal: ['Something went wrong', 'Nothing was changed. Try again in a moment.'],
};

/** A page that says why a request was refused, and what to do. */
export function messagePage(status: number, code: string, session?: PortalSession) {
  const [title, text] =
    MESSAGES[code] ?? (status < 500 ? ['That request is not valid', `The page was asked for in a way it cannot answer (${code}).`] : MESSAGES.internal!);
  return page(title, html`<h1>${title}</h1><p>${text}</p>`, { session });
}
