import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * Signing secrets at rest: AES-256-GCM under SECRETS_KEY. A sealed value is recognisable by its
 * prefix, so sealed and plaintext values can be told apart (a store written before the key was
 * set, or without one), and the version leaves room for another scheme later.
 */
export const SEALED_PREFIX = 'enc:v1:';
const IV_BYTES = 12;
const TAG_BYTES = 16;
export const SECRETS_KEY_BYTES = 32;

export const isSealed = (value: string) => value.startsWith(SEALED_PREFIX);

/** `enc:v1:` + base64url(iv | ciphertext | tag), with a fresh random IV each time. */
export function sealSecret(plaintext: string, key: Buffer): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return SEALED_PREFIX + Buffer.concat([iv, ciphertext, cipher.getAuthTag()]).toString('base64url');
}

/**
 * The secret a stored value holds: a sealed one opened with `key`, a plaintext one as it is.
 * Throws when a sealed value cannot be opened (no key, another key, or altered).
 */
export function openSecret(stored: string, key: Buffer | undefined): string {
  if (!isSealed(stored)) return stored;
  if (!key) throw new Error('a signing secret is stored encrypted, and SECRETS_KEY is not set');
  const sealed = Buffer.from(stored.slice(SEALED_PREFIX.length), 'base64url');
  const iv = sealed.subarray(0, IV_BYTES);
  const tag = sealed.subarray(sealed.length - TAG_BYTES);
  // A fixed tag length: GCM would otherwise accept a truncated tag, which is easier to forge.
  const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(sealed.subarray(IV_BYTES, sealed.length - TAG_BYTES)), decipher.final()]).toString('utf8');
}

/** How a stored secret is written: sealed when a key is configured, as it is otherwise. */
export const secretForStorage = (plaintext: string, key: Buffer | undefined) => (key ? sealSecret(plaintext, key) : plaintext);
