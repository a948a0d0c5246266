import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface BenchCertificate {
  keyPath: string;
  /** PEM file path: the receiver's certificate, and NODE_EXTRA_CA_CERTS for the service. */
  certPath: string;
  cert: string;
  dir: string;
}

/** Self-signed certificate for 127.0.0.1 and localhost (same shape as test/support/tls.ts). */
export function createCertificate(): BenchCertificate {
  const dir = mkdtempSync(join(tmpdir(), 'bench-tls-'));
  const keyPath = join(dir, 'key.pem');
  const certPath = join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=localhost',
      '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost', '-keyout', keyPath, '-out', certPath],
    { stdio: 'pipe' },
  );
  return { keyPath, certPath, cert: readFileSync(certPath, 'utf8'), dir };
}
