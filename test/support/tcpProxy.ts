import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net';

/**
 * A TCP proxy in front of a server of the machine's (PostgreSQL, Redis), so it can become
 * unreachable without being stopped. `cut`: every proxied connection is destroyed and new ones
 * are closed at once (the server restarting, a refused connection). `stall`: nothing more is
 * forwarded and new connections are held open in silence (a network partition, packets
 * dropped). `delayReplies`: what the server sends reaches the client that much later, in order
 * (a slow path back, or a client too busy to read its socket).
 */
export async function startTcpProxy(target: { host: string; port: number }) {
  const sockets = new Set<Socket>();
  const pairs = new Set<[Socket, Socket]>();
  let mode: 'open' | 'cut' | 'stall' = 'open';
  let replyDelayMs = 0;
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  };
  const server = createServer((downstream) => {
    track(downstream);
    if (mode === 'cut') return downstream.destroy();
    if (mode === 'stall') return;
    const upstream = createConnection(target);
    track(upstream);
    downstream.pipe(upstream);
    // Replies are released in the order they came, each no sooner than replyDelayMs after it came.
    let releasing = Promise.resolve();
    upstream.on('data', (chunk: Buffer) => {
      const due = Date.now() + replyDelayMs;
      releasing = releasing.then(async () => {
        if (due > Date.now()) await new Promise((resolve) => setTimeout(resolve, due - Date.now()));
        if (!downstream.destroyed) downstream.write(chunk);
      });
    });
    const pair: [Socket, Socket] = [downstream, upstream];
    pairs.add(pair);
    upstream.on('close', () => downstream.destroy());
    downstream.on('close', () => (upstream.destroy(), pairs.delete(pair)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const destroyAll = () => sockets.forEach((socket) => socket.destroy());
  return {
    port: (server.address() as AddressInfo).port,
    cut() {
      mode = 'cut';
      destroyAll();
    },
    delayReplies(ms: number) {
      replyDelayMs = ms;
    },
    stall() {
      mode = 'stall';
      for (const [downstream, upstream] of pairs) {
        downstream.unpipe(upstream);
        downstream.pause();
        upstream.pause();
      }
    },
    /** Back to forwarding; connections from the outage are dropped, as a healed network would reset them. */
    restore() {
      mode = 'open';
      destroyAll();
    },
    close() {
      destroyAll();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
