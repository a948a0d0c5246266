import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Certificate {
  key: string;
  cert: string;
  keyPath: string;
  /** PEM file path: the receiver's certificate, and NODE_EXTRA_CA_CERTS for service processes. */
  certPath: string;
  /** The temporary directory both files are in. */
  dir: string;
}

/**
 * A new self-signed certificate (openssl, RSA 2048, two days) for every name a local receiver
 * is reached at: 127.0.0.1, ::1, localhost and *.hooks.test (names the DNS tests serve).
 */
export function createCertificate(): Certificate {
  const dir = mkdtempSync(join(tmpdir(), 'contact-hooks-tls-'));
  const keyPath = join(dir, 'key.pem');
  const certPath = join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '2',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost,DNS:*.hooks.test',
      '-keyout',
      keyPath,
      '-out',
      certPath,
    ],
    { stdio: 'pipe' },
  );
  return { key: readFileSync(keyPath, 'utf8'), cert: readFileSync(certPath, 'utf8'), keyPath, certPath, dir };
}
