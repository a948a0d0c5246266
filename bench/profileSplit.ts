/**
 * `node dist/bench/profileSplit.js <file.cpuprofile>...`: where a service process spent its CPU,
 * by component, from V8 CPU profiles (`BENCH_CPU_PROF=<dir> npm run bench` writes one per service
 * process). Each sample goes to the component of the innermost frame that names one: a library
 * (the driver, undici, pino, ioredis) or, for our own code, the module. Idle time is left out.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Components, by what a frame's URL contains; the first match from the innermost frame out wins. */
const COMPONENTS: [string, RegExp][] = [
  ['PostgreSQL client (pg)', /node_modules\/(pg|pg-protocol|pg-pool|pg-types|postgres-[a-z]+)\//],
  // WebAssembly frames are not matched: undici's HTTP parser (llhttp) is WebAssembly too, so a
  // wasm frame goes to whichever of the two called it, the next frame out.
  ['PGlite (PostgreSQL in WebAssembly)', /node_modules\/@electric-sql\/pglite\//],
  ["BullMQ (jobs, workers, its scripts' arguments)", /node_modules\/(bullmq|msgpackr)\//],
  ['Redis client (ioredis)', /node_modules\/(ioredis|redis-parser|cluster-key-slot)\//],
  ['POST (undici, TLS, signing)', /node_modules\/undici\/|node:_tls|node:tls|src\/workers\/poster|src\/domain\/signature|src\/workers\/dnsLookup/],
  ['logging (pino)', /node_modules\/(pino|sonic-boom|@pinojs)[-/]/],
  ['metrics (prom-client)', /node_modules\/prom-client\//],
  [
    'HTTP ingest (Fastify, zod, routes)',
    /node_modules\/(fastify|@fastify|find-my-way|avvio|light-my-request|zod|fastify-type-provider-zod|fast-json-stringify|secure-json-parse)\/|src\/api\//,
  ],
  ['phone numbers (libphonenumber-js)', /node_modules\/libphonenumber-js\//],
  ['use cases (services, domain)', /src\/(services|domain)\//],
  ['job handlers and relay', /src\/workers\/(eventJob|deliveryJob|relay)\.js|src\/queue\//],
  ['pacer', /src\/workers\/(pace|pacer|redisPacer)\.js/],
  ['engine (line, deliverer, group commits)', /src\/(workers|storage)\//],
];

function split(file: string) {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const totals = new Map<string, number>();
  let busy = 0;
  profile.samples.forEach((sample, i) => {
    const node = byId.get(sample)!;
    if (node.callFrame.functionName === '(idle)') return;
    const micros = profile.timeDeltas[i] ?? 0;
    busy += micros;
    let component = 'Node itself (GC, I/O, timers)';
    for (let id: number | undefined = sample; id !== undefined; id = parent.get(id)) {
      const url = byId.get(id)!.callFrame.url;
      const match = COMPONENTS.find(([, pattern]) => pattern.test(url));
      if (match) {
        component = match[0];
        break;
      }
    }
    totals.set(component, (totals.get(component) ?? 0) + micros);
  });
  return { busy, totals };
}

for (const file of process.argv.slice(2)) {
  const { busy, totals } = split(file);
  process.stdout.write(`${file}: ${(busy / 1e6).toFixed(2)} s busy\n`);
  for (const [component, micros] of [...totals].sort((a, b) => b[1] - a[1])) {
    process.stdout.write(`  ${((micros / busy) * 100).toFixed(1).padStart(5)}%  ${component}\n`);
  }
}
