import { TLSSocket } from 'node:tls';
import { buildConnector } from 'undici';

/**
 * A connector for a development server (the SSRF guard lifted) that also accepts a TLS peer whose
 * certificate is one of `trusted` (SHA-256 fingerprints): the self-signed certificates of the
 * `contact-hooks listen` receivers on this machine. Every other peer is verified as usual, by its
 * chain and its name; a failure keeps the code TLS gives it, so the delivery log says `tls_error`
 * as before. Looked up on each new connection, so a receiver started after the server is trusted.
 */
export function trustListenCertificates(options: buildConnector.BuildOptions, trusted: () => ReadonlySet<string>): buildConnector.connector {
  // Verification happens below, where a pinned certificate can be let through. No TLS session is
  // resumed: a resumed session shows no peer certificate, so a second connection to a receiver
  // (two deliveries at once, or after the first connection closed) could not be pinned.
  const connect = buildConnector({ ...options, rejectUnauthorized: false, maxCachedSessions: 0 });
  return (connectOptions, callback) =>
    connect(connectOptions, (error, socket) => {
      if (error) return callback(error, null);
      if (!(socket instanceof TLSSocket) || socket.authorized) return callback(null, socket);
      let pinned: boolean;
      try {
        pinned = trusted().has(socket.getPeerCertificate().fingerprint256);
      } catch (readError) {
        socket.destroy();
        return callback(readError as Error, null);
      }
      if (pinned) return callback(null, socket);
      socket.destroy();
      const reason = String(socket.authorizationError);
      callback(Object.assign(new Error(`the target's certificate is not trusted (${reason})`), { code: reason }), null);
    });
}
