import { randomBytes } from 'node:crypto';
import { Cluster, Redis } from 'ioredis';

/** Where the namespace lives: one Redis server (its URL), or a cluster (REDIS_CLUSTER_NODES's list). */
export type RedisPlace = { url: string } | { clusterNodes: string };

/** A namespace on one Redis server (REDIS_URL). */
export const redisNamespace = (url: string, label: string) => ({ ...namespace({ url }, label), url });

/** A namespace on a Redis Cluster (REDIS_CLUSTER_NODES). */
export const clusterNamespace = (clusterNodes: string, label: string) => namespace({ clusterNodes }, label);

export type RedisNamespace = ReturnType<typeof namespace>;

/**
 * A key prefix of its own on a shared Redis or cluster (the service's QUEUE_PREFIX), so runs on
 * one Redis never meet; `env` is what a service process needs to use it, `target` what the
 * service's own modules take. `cleanup` deletes every key under the prefix (BullMQ's are under
 * `{prefix}`) and says how many there were.
 */
function namespace(place: RedisPlace, label: string) {
  const prefix = `${label}-${randomBytes(5).toString('hex')}`;
  const cluster = 'clusterNodes' in place ? place.clusterNodes : undefined;
  const url = 'url' in place ? place.url : undefined;
  return {
    prefix,
    env: { ...(cluster ? { REDIS_CLUSTER_NODES: cluster } : { REDIS_URL: url! }), QUEUE_PREFIX: prefix },
    target: cluster ? { clusterNodes: cluster.split(',').map((node) => ({ host: node.split(':')[0]!, port: Number(node.split(':')[1]) })) } : { url: url! },
    /** A client of the namespace's Redis (a cluster client on a cluster); the caller disconnects it. */
    client: (): Redis | Cluster => (cluster ? new Cluster(cluster.split(',')) : new Redis(url!)),
    async cleanup(): Promise<number> {
      const client = cluster ? new Cluster(cluster.split(',')) : new Redis(url!);
      let removed = 0;
      try {
        // A cluster's keys are spread over its masters; each scans only its own.
        const servers = client instanceof Cluster ? await mastersOf(client) : [client];
        for (const server of servers) {
          for (const match of [`${prefix}:*`, `{${prefix}}:*`]) {
            for await (const keys of server.scanStream({ match, count: 1000 }) as AsyncIterable<string[]>) {
              for (const key of keys) removed += await server.del(key);
            }
          }
        }
      } finally {
        client.disconnect();
      }
      return removed;
    },
  };
}

async function mastersOf(cluster: Cluster) {
  await new Promise<void>((resolve, reject) => {
    if (cluster.status === 'ready') return resolve();
    cluster.once('ready', resolve);
    cluster.once('error', reject);
  });
  return cluster.nodes('master');
}
