import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net';

/**
 * A TCP hop in front of a local port that holds each new connection `delayMs` before forwarding
 * it: a TLS handshake through it takes that much longer, as a distant host's or a loaded
 * machine's does. Connections already forwarded are not slowed.
 */
export async function startSlowHandshakes(targetPort: number, delayMs: number) {
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    return socket.on('error', () => {}).on('close', () => sockets.delete(socket));
  };
  const server = createServer((downstream) => {
    track(downstream).pause();
    setTimeout(() => {
      const upstream = track(createConnection({ host: '127.0.0.1', port: targetPort }));
      downstream.pipe(upstream).pipe(downstream);
      downstream.resume();
      upstream.on('close', () => downstream.destroy());
      downstream.on('close', () => upstream.destroy());
    }, delayMs);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close() {
      sockets.forEach((socket) => socket.destroy());
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
