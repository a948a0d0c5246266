import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestCertificate {
  key: string;
  cert: string;
  /** PEM file path, e.g. for NODE_EXTRA_CA_CERTS in child processes. */
  certPath: string;
  dir: string;
}

let cached: TestCertificate | undefined;

/** Self-signed certificate for 127.0.0.1, ::1 and localhost, generated once per process. */
export function createTestCertificate(): TestCertificate {
  if (cached) return cached;
  const dir = mkdtempSync(join(tmpdir(), 'test-tls-'));
  const keyPath = join(dir, 'key.pem');
  const certPath = join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    [
      'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2',
      '-subj', '/CN=localhost',
      '-addext', 'subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost,DNS:*.hooks.test',
      '-keyout', keyPath, '-out', certPath,
    ],
    { stdio: 'pipe' },
  );
  cached = { key: readFileSync(keyPath, 'utf8'), cert: readFileSync(certPath, 'utf8'), certPath, dir };
  return cached;
}
