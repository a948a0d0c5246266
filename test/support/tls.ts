import { createCertificate, type Certificate } from '../../kit/tls.js';

export type TestCertificate = Certificate;

let cached: TestCertificate | undefined;

/** The kit's certificate, made once per test process: every receiver and service of a file trusts the same one. */
export function createTestCertificate(): TestCertificate {
  cached ??= createCertificate();
  return cached;
}
