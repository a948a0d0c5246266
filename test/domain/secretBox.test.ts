import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isSealed, openSecret, sealSecret, secretForStorage } from '../../src/domain/secretBox.js';
import { newSigningSecret } from '../../src/domain/signature.js';

const key = randomBytes(32);

describe('signing secrets at rest (AES-256-GCM)', () => {
  it('seals to a recognisable enc:v1: value that holds no trace of the secret, and opens it again', () => {
    const secret = newSigningSecret();
    const sealed = sealSecret(secret, key);
    expect(sealed).toMatch(/^enc:v1:[A-Za-z0-9_-]+$/);
    expect(sealed).not.toContain(secret.slice(6, 20));
    expect(isSealed(sealed)).toBe(true);
    expect(openSecret(sealed, key)).toBe(secret);
  });

  it('uses a fresh IV each time: the same secret seals differently', () => {
    const secret = newSigningSecret();
    expect(sealSecret(secret, key)).not.toBe(sealSecret(secret, key));
  });

  it('reads a plaintext value as it is, with or without a key', () => {
    const secret = newSigningSecret();
    expect(isSealed(secret)).toBe(false);
    expect(openSecret(secret, key)).toBe(secret);
    expect(openSecret(secret, undefined)).toBe(secret);
  });

  it('refuses to open with another key, without a key, or after any change to the sealed value', () => {
    const sealed = sealSecret(newSigningSecret(), key);
    expect(() => openSecret(sealed, randomBytes(32))).toThrow();
    expect(() => openSecret(sealed, undefined)).toThrow(/SECRETS_KEY/);
    const body = sealed.slice('enc:v1:'.length);
    for (let i = 0; i < body.length; i += 7) {
      const flipped = body.slice(0, i) + (body[i] === 'A' ? 'B' : 'A') + body.slice(i + 1);
      expect(() => openSecret(`enc:v1:${flipped}`, key), `changed at ${i}`).toThrow();
    }
    expect(() => openSecret(`enc:v1:${body.slice(0, -4)}`, key)).toThrow(); // a truncated tag
    expect(() => openSecret('enc:v1:', key)).toThrow();
  });

  it('stores sealed only when a key is configured', () => {
    const secret = newSigningSecret();
    expect(secretForStorage(secret, undefined)).toBe(secret);
    expect(openSecret(secretForStorage(secret, key), key)).toBe(secret);
  });
});
