import { InvalidInputError } from './errors.js';
import { isBlank, normalisePhone } from './phone.js';

/** Fields a contact's owner can hold against later upserts. */
export const CONTACT_FIELDS = ['name', 'email'] as const;
export type ContactField = (typeof CONTACT_FIELDS)[number];

/** Why an upsert wrote nothing; part of the public contract, documented in the README. */
export type SkipReason = 'invalid_phone' | 'invalid_name' | 'invalid_email' | 'owner_edited';

export interface ContactInput {
  phone?: string | null | undefined;
  name?: string | null | undefined;
  email?: string | null | undefined;
}

/** Input that passed validation: phone in E.164, blank optional fields dropped. */
export interface ValidContact {
  phone: string;
  fields: Partial<Record<ContactField, string>>;
}

export interface StoredContact {
  id: string;
  phone: string;
  name: string | null;
  email: string | null;
  source: string;
  ownerFields: ContactField[];
}

const MAX_NAME_LENGTH = 256;
const MAX_EMAIL_LENGTH = 254;
// Deliberately loose: one @, no spaces, a dot in the domain. Mailbox existence is not ours to judge.
const EMAIL_SHAPE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export const isValidEmail = (email: string) => email.length <= MAX_EMAIL_LENGTH && EMAIL_SHAPE.test(email);
export const isValidName = (name: string) => name.length <= MAX_NAME_LENGTH;

/**
 * Checks an upsert's input. A missing phone is the caller's error (400); a phone, name or email
 * that is present but unusable makes the upsert `skipped` with a reason, as the spec's rule 3 says.
 */
export function validateContact(input: ContactInput, defaultCountry: string): ValidContact | { skip: SkipReason; phone?: string } {
  if (isBlank(input.phone)) throw new InvalidInputError('missing_phone');
  const phone = normalisePhone(input.phone!, defaultCountry);
  if (!phone) return { skip: 'invalid_phone' };
  const fields: ValidContact['fields'] = {};
  if (!isBlank(input.name)) {
    const name = input.name!.trim();
    if (!isValidName(name)) return { skip: 'invalid_name', phone };
    fields.name = name;
  }
  if (!isBlank(input.email)) {
    const email = input.email!.trim();
    if (!isValidEmail(email)) return { skip: 'invalid_email', phone };
    fields.email = email;
  }
  return { phone, fields };
}

/*
 * The upsert's rules on an existing contact: a field sent is written unless the owner holds it
 * (owner edits win over every later upsert, public or CRM, field by field); a field not sent, or
 * sent blank, never blanks a stored value; when every field sent is owner-held, nothing could be
 * written and the upsert is skipped as `owner_edited`. They are applied by the upsert statement
 * itself (src/storage/contacts.ts), to the row under its lock, so no owner edit can slip between
 * reading a contact and writing it.
 */

/** An owner edit: `null` clears a field, and either way the field becomes owner-held. */
export type OwnerEdit = Partial<Record<ContactField, string | null>>;

export function validateOwnerEdit(edit: OwnerEdit): OwnerEdit {
  if (Object.keys(edit).length === 0) throw new InvalidInputError('invalid_request');
  const cleaned: OwnerEdit = {};
  for (const field of CONTACT_FIELDS) {
    const value = edit[field];
    if (value === undefined) continue;
    if (value === null || isBlank(value)) {
      cleaned[field] = null;
      continue;
    }
    const trimmed = value.trim();
    if (field === 'email' && !isValidEmail(trimmed)) throw new InvalidInputError('invalid_email');
    if (field === 'name' && !isValidName(trimmed)) throw new InvalidInputError('invalid_name');
    cleaned[field] = trimmed;
  }
  return cleaned;
}
