import { rmSync } from 'node:fs';
import { afterAll } from 'vitest';
import { createCertificate, type Certificate } from '../../kit/tls.js';

export type TestCertificate = Certificate;

let cached: TestCertificate | undefined;

/** The kit's certificate, made once per test file: every receiver and service of a file trusts the same one. */
export function createTestCertificate(): TestCertificate {
  cached ??= createCertificate();
  return cached;
}

// Registered as a test file first imports this module (each file gets its own copy of it), so
// the file's certificate directory is removed once the file is done; the worker processes
// vitest runs files in end without an 'exit' event, so nothing later would remove it.
afterAll(() => {
  if (cached) rmSync(cached.dir, { recursive: true, force: true });
  cached = undefined;
});
