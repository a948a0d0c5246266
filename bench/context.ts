import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createDatabase } from '../kit/databases.js';
import { redisNamespace } from '../kit/redis.js';
import { createCertificate, type Certificate } from '../kit/tls.js';
import type { BenchSettings } from './settings.js';
import { phoneSource, type PhoneSource } from './support/clients.js';
import { createCpuMeter, type CpuMeter } from './support/cpu.js';
import { startReceiver, type Receiver } from '../kit/arrivalReceiver.js';
import type { Run } from './support/seeding.js';
import { sampleMemory, type MemorySampler } from './support/memory.js';
import { createServices, type Services } from './support/services.js';

export const RESULTS_DIR = join(process.cwd(), 'bench', 'results');
export const LOG_DIR = join(RESULTS_DIR, 'logs');
/** How often the run's memory is sampled, for the page's memory chart. */
const MEMORY_SAMPLE_MS = 1_000;

/** Everything one run shares: the receiver, the PostgreSQL database and Redis prefix, the processes, the CPU table. */
export interface BenchContext {
  settings: BenchSettings;
  /** INTERNAL_API_TOKEN of every service the run starts. */
  token: string;
  certificate: Certificate;
  receiver: Receiver;
  database: { name: string; url: string };
  redisPrefix: string;
  /** Direct SQL on the run's PostgreSQL database (seeding, checks). */
  sql: Run;
  cpu: CpuMeter;
  services: Services;
  /** RSS of every process the run starts, sampled from its start to its close. */
  memory: MemorySampler;
  phones: PhoneSource;
  /** What every service process gets; `postgresEnv` adds the run's database and Redis prefix. */
  commonEnv: Record<string, string>;
  postgresEnv: Record<string, string>;
  /** A temporary directory removed when the run ends. */
  tempDir(label: string): string;
  progress: (message: string) => void;
}

/** Opens a run's context; `close` stops what is left, drops the database, deletes the Redis keys and temporary directories. */
export async function openContext(settings: BenchSettings, cpu = createCpuMeter()): Promise<BenchContext & { close(): Promise<void> }> {
  const started = performance.now();
  const progress = (message: string) => process.stderr.write(`[bench ${Math.round((performance.now() - started) / 1000)}s] ${message}\n`);
  rmSync(LOG_DIR, { recursive: true, force: true });
  mkdirSync(LOG_DIR, { recursive: true });
  const tempDirs: string[] = [];
  const certificate = createCertificate();
  tempDirs.push(certificate.dir);
  const receiver = await startReceiver(certificate);
  cpu.track('receiver', receiver.pid);
  const database = await createDatabase(settings.adminUrl, 'contact_hooks_bench');
  cpu.countDatabase(database.name);
  const redis = redisNamespace(settings.redisUrl, 'contact-hooks-bench');
  // One connection, let go when idle: the upsert figure's two pools of 50 need all of PostgreSQL's 100.
  const admin = new pg.Pool({ connectionString: database.url, max: 1, idleTimeoutMillis: 200 });
  const services = createServices(LOG_DIR, cpu);
  const memory = sampleMemory(MEMORY_SAMPLE_MS);
  const token = `bench-internal-${randomBytes(12).toString('hex')}`;
  const commonEnv = {
    INTERNAL_API_TOKEN: token,
    RATE_LIMIT_PER_MINUTE: '1000000000',
    DELIVERY_ALLOW_PRIVATE_NETWORKS: 'true',
    NODE_EXTRA_CA_CERTS: certificate.certPath,
    LOG_LEVEL: 'info',
  };
  progress(`PostgreSQL database ${database.name}, Redis prefix ${redis.prefix}, receiver pid ${receiver.pid}`);
  return {
    settings,
    token,
    certificate,
    receiver,
    database,
    redisPrefix: redis.prefix,
    sql: (text, params) => admin.query(text, params),
    cpu,
    services,
    memory,
    phones: phoneSource(),
    commonEnv,
    postgresEnv: { ...commonEnv, DATABASE_URL: database.url, REDIS_URL: settings.redisUrl, QUEUE_PREFIX: redis.prefix },
    tempDir(label) {
      const dir = mkdtempSync(join(os.tmpdir(), `bench-${label}-`));
      tempDirs.push(dir);
      return dir;
    },
    progress,
    /** Every step runs even when one before it failed; the failures are reported, then thrown. */
    async close() {
      const failures: unknown[] = [];
      const step = async (what: string, work: () => Promise<unknown>) =>
        work().catch((error: unknown) => {
          progress(`cleanup: ${what} failed: ${String(error)}`);
          failures.push(error);
        });
      memory.stop();
      await step('stopping services', () => services.stopAll());
      await step('closing the SQL connection', () => admin.end());
      await step('stopping the receiver', () => receiver.close());
      await step(`dropping database ${database.name}`, () => database.drop());
      await step(`deleting Redis keys under ${redis.prefix}`, async () => progress(`cleaned up: ${await redis.cleanup()} Redis keys deleted`));
      for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
      if (failures.length > 0) throw new AggregateError(failures, 'the benchmark could not clean up after itself');
    },
  };
}
