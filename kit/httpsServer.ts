import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface HttpsServer {
  server: Server;
  port: number;
  /** https://127.0.0.1:PORT; append paths so one server stands for many targets. */
  url: string;
  /** Destroys open connections (a held request included), then closes the listener. */
  close(): Promise<void>;
}

/**
 * An HTTPS server on 127.0.0.1 (a free port) that hands each request over with its whole body.
 * Both receivers stand on it: the tests' (in process, records every request and answers as
 * told) and the benchmarks' (its own process, records arrival times).
 */
export async function startHttpsServer(
  tls: { key: string; cert: string },
  onRequest: (req: IncomingMessage, res: ServerResponse, body: Buffer) => void,
  options: { keepAliveTimeout?: number } = {},
): Promise<HttpsServer> {
  const sockets = new Set<Socket>();
  const server = createServer({ key: tls.key, cert: tls.cert, ...options }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => onRequest(req, res, Buffer.concat(chunks)));
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    // Clients that hang up mid-response (timeouts, capped body reads, a killed service) are
    // part of what runs against a receiver; their resets say nothing about the receiver.
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  // Handshakes a client abandons (a refused address, a process killed mid-connect) likewise.
  server.on('tlsClientError', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    port,
    url: `https://127.0.0.1:${port}`,
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
