import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './processes.js';
import { waitUntil } from './waiting.js';

const run = promisify(execFile);

/** One master of the cluster: its port, its directory (nodes.conf), and its process while it runs. */
interface Master {
  port: number;
  dir: string;
  child?: ChildProcess;
  exited?: Promise<unknown>;
}

function startMaster(master: Master) {
  // No persistence: a master that is killed and started again comes back empty, with only its
  // place in the cluster (nodes.conf, kept in its directory).
  const child = spawn(
    'redis-server',
    [
      '--port',
      String(master.port),
      '--bind',
      '127.0.0.1',
      '--cluster-enabled',
      'yes',
      '--cluster-config-file',
      'nodes.conf',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      master.dir,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  master.child = child;
  // A redis-server that could not start (none on PATH) reports an error and may never report an exit.
  master.exited = new Promise((resolve) => {
    child.on('exit', resolve);
    child.on('error', (error) => {
      console.error(`[redis cluster] could not start redis-server on ${master.port}: ${error.message}\n${stderr}`);
      resolve(error);
    });
  });
}

async function stopMaster(master: Master) {
  const { child, exited } = master;
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await exited;
  master.child = undefined;
}

const clusterInfo = async (port: number) => (await run('redis-cli', ['-p', String(port), 'cluster', 'info'])).stdout;
const allOk = async (masters: Master[]) => {
  const infos = await Promise.all(masters.map((master) => clusterInfo(master.port).catch(() => '')));
  return infos.every((info) => info.includes('cluster_state:ok'));
};

/**
 * A Redis Cluster of `masters` masters (no replicas) from the machine's redis-server, on free
 * ports of 127.0.0.1, each in a directory of a temporary one. `nodes` is what REDIS_CLUSTER_NODES
 * takes. `kill` stops every master (SIGKILL), `restart` starts them again on the same ports and
 * configuration, empty, and waits for the cluster to be ok; `stop` ends them by their own PIDs
 * and removes the directory. Without redis-server or redis-cli it throws: a suite that needs the
 * cluster fails rather than skips.
 */
export async function startRedisCluster({ masters: count = 3 } = {}) {
  const root = mkdtempSync(join(tmpdir(), 'contact-hooks-redis-cluster-'));
  const masters: Master[] = [];
  for (let i = 0; i < count; i++) {
    const dir = join(root, String(i));
    mkdirSync(dir);
    masters.push({ port: await freePort(), dir });
  }
  const stopAll = () => Promise.all(masters.map(stopMaster));
  try {
    masters.forEach(startMaster);
    await waitUntil(
      async () =>
        (
          await Promise.all(
            masters.map((m) =>
              run('redis-cli', ['-p', String(m.port), 'ping']).then(
                () => true,
                () => false,
              ),
            ),
          )
        ).every(Boolean),
      10_000,
      () => 'redis-server did not answer',
    );
    const addresses = masters.map((master) => `127.0.0.1:${master.port}`);
    await run('redis-cli', ['--cluster', 'create', ...addresses, '--cluster-replicas', '0', '--cluster-yes']);
    await waitUntil(
      () => allOk(masters),
      20_000,
      () => 'the cluster never reached cluster_state:ok',
    );
  } catch (error) {
    await stopAll();
    rmSync(root, { recursive: true, force: true });
    throw error;
  }

  return {
    nodes: masters.map((master) => `127.0.0.1:${master.port}`).join(','),
    ports: masters.map((master) => master.port),
    /** Every master gone at once: the cluster is unreachable. */
    kill: stopAll,
    /** Every master back, empty, in its old place; resolves once the cluster is ok again. */
    restart: async () => {
      masters.forEach(startMaster);
      await waitUntil(
        () => allOk(masters),
        30_000,
        () => 'the restarted cluster never reached cluster_state:ok',
      );
    },
    stop: async () => {
      await stopAll();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

export type RedisCluster = Awaited<ReturnType<typeof startRedisCluster>>;
