import { X509Certificate } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The certificates of the `contact-hooks listen` receivers running on this machine, one PEM file
 * per receiver in DATA_DIR/listen, present while it runs. A development server (the SSRF guard
 * lifted) trusts exactly these for its deliveries, beside the CAs it trusts anyway.
 */
const directory = (dataDir: string) => join(dataDir, 'listen');

/** Leaves a receiver's certificate for the service; `remove` takes it back when the receiver stops. */
export function storeListenCertificate(dataDir: string, certificatePem: string) {
  mkdirSync(directory(dataDir), { recursive: true });
  const path = join(directory(dataDir), `${process.pid}.pem`);
  writeFileSync(path, certificatePem);
  return { path, remove: () => rmSync(path, { force: true }) };
}

/** SHA-256 fingerprints (as TLS peers report them) of the receivers' certificates now in DATA_DIR. */
export function listenCertificateFingerprints(dataDir: string): Set<string> {
  let files: string[];
  try {
    files = readdirSync(directory(dataDir)).filter((file) => file.endsWith('.pem'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return new Set();
    throw error;
  }
  const fingerprints = new Set<string>();
  for (const file of files) {
    try {
      fingerprints.add(new X509Certificate(readFileSync(join(directory(dataDir), file))).fingerprint256);
    } catch (error) {
      // A receiver that stopped between the listing and the read took its file with it.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  return fingerprints;
}
