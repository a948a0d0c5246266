import { createSocket } from 'node:dgram';

export interface DnsRecord {
  /** IPv4 address answered for A queries; AAAA queries get no answer (NOERROR, empty). */
  address: string;
  ttlSeconds?: number;
  /** Answer this late; `Infinity` never answers. */
  delayMs?: number;
}

/**
 * A DNS server on 127.0.0.1 (UDP) for the names a test gives it, so name resolution is tested
 * against a real server without any network: it counts the queries each name gets, and can be
 * slow or silent for some. Unknown names get NXDOMAIN.
 */
export async function startDnsServer(records: Record<string, DnsRecord>) {
  const socket = createSocket('udp4');
  const queries = new Map<string, number>();
  const timers = new Set<NodeJS.Timeout>();
  socket.on('message', (message, peer) => {
    const { name, end, type } = readQuestion(message);
    queries.set(name, (queries.get(name) ?? 0) + 1);
    const record = records[name];
    if (record?.delayMs === Number.POSITIVE_INFINITY) return;
    const answer = type === 1 && record ? [record] : [];
    const header = Buffer.alloc(12);
    message.copy(header, 0, 0, 2); // the query's id
    header.writeUInt16BE(record ? 0x8180 : 0x8183, 2); // a response, recursion available; NOERROR or NXDOMAIN
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(answer.length, 6);
    const records_ = answer.map((r) => {
      const rr = Buffer.alloc(16);
      rr.writeUInt16BE(0xc00c, 0); // the name: a pointer to the question's
      rr.writeUInt16BE(1, 2); // A
      rr.writeUInt16BE(1, 4); // IN
      rr.writeUInt32BE(r.ttlSeconds ?? 60, 6);
      rr.writeUInt16BE(4, 10);
      r.address.split('.').forEach((octet, i) => rr.writeUInt8(Number(octet), 12 + i));
      return rr;
    });
    const reply = Buffer.concat([header, message.subarray(12, end), ...records_]);
    const send = () => socket.send(reply, peer.port, peer.address);
    if (!record?.delayMs) return send();
    const timer = setTimeout(() => (timers.delete(timer), send()), record.delayMs);
    timers.add(timer);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    server: `127.0.0.1:${socket.address().port}`,
    queries: (name: string) => queries.get(name) ?? 0,
    close: () => {
      for (const timer of timers) clearTimeout(timer);
      return new Promise<void>((resolve) => socket.close(() => resolve()));
    },
  };
}

/** The first question of a query: its name (lowercase, no trailing dot), type, and where it ends. */
function readQuestion(message: Buffer) {
  const labels: string[] = [];
  let offset = 12;
  for (let length = message[offset]!; length > 0; length = message[offset]!) {
    labels.push(message.subarray(offset + 1, offset + 1 + length).toString('latin1'));
    offset += length + 1;
  }
  const type = message.readUInt16BE(offset + 1);
  return { name: labels.join('.').toLowerCase(), type, end: offset + 5 };
}
