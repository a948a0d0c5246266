import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack } from '../support/stack.js';
import { client } from '../support/client.js';
import { startWeb } from '../support/processes.js';
import { describeEachRedisShape } from '../support/redisShapes.js';
import { startTcpProxy } from '../support/tcpProxy.js';

const LIMIT = 10;
/** When Redis becomes reachable, after the web process was started. */
const REDIS_REACHABLE_AFTER_MS = 1_500;

/**
 * With REDIS_URL, RATE_LIMIT_PER_MINUTE holds across web processes: two real web processes on
 * one Redis (a server, or a cluster: the limiter's script declares its one key), one key,
 * requests alternating between them.
 */
describeEachRedisShape('the API rate limit across web processes, Redis %s', (shape) => {
  let stack: Awaited<ReturnType<typeof startStack>>;
  let second: Awaited<ReturnType<typeof startWeb>>;

  beforeAll(async () => {
    stack = await startStack({ mode: 'workers', redis: shape, workers: 0, env: { RATE_LIMIT_PER_MINUTE: String(LIMIT) } });
    second = await startWeb(stack.env);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it(`lets ${LIMIT} requests of a key through in all, then answers 429 rate_limited on either process`, async () => {
    const key = await stack.http.newKey('limited');
    const processes = [client(stack.web.url).api(key), client(second.url).api(key)];
    const answers = [];
    for (let i = 0; i < LIMIT + 4; i++) answers.push(await processes[i % 2]!('GET', '/hooks'));
    expect(answers.map((answer) => answer.status)).toStrictEqual([...Array(LIMIT).fill(200), 429, 429, 429, 429]);
    expect(answers.at(-1)!.body).toStrictEqual({ error: 'rate_limited' });

    // Another key of the same account has its own count.
    const other = client(second.url).api(await stack.http.newKey('limited'));
    expect((await other('GET', '/hooks')).status).toBe(200);
  });
});

/**
 * A web process that starts while its Redis is not reachable yet (Redis or its network coming up
 * beside it) waits for its connections before it listens, a few seconds at most, so its first
 * requests are counted like any other: listening at once, it would let them pass uncounted.
 */
describe('the API rate limit of a web process started before its Redis was reachable', () => {
  let stack: Awaited<ReturnType<typeof startStack>>;
  let proxy: Awaited<ReturnType<typeof startTcpProxy>>;

  beforeAll(async () => {
    stack = await startStack({ mode: 'workers', redis: 'single', workers: 0, env: { RATE_LIMIT_PER_MINUTE: String(LIMIT) } });
    const { REDIS_URL } = stack.redis!.env as { REDIS_URL?: string };
    if (!REDIS_URL) throw new Error('this test fronts one Redis server');
    const redis = new URL(REDIS_URL);
    proxy = await startTcpProxy({ host: redis.hostname, port: Number(redis.port || 6379) });
  });
  afterAll(async () => {
    await stack?.stop();
    await proxy?.close();
  });

  it(`counts its first requests: ${LIMIT} go through, then 429 rate_limited`, async () => {
    const key = await stack.http.newKey('limited');
    proxy.cut();
    const reachable = setTimeout(() => proxy.restore(), REDIS_REACHABLE_AFTER_MS);
    const started = Date.now();
    const early = await startWeb({ ...stack.env, REDIS_URL: `redis://127.0.0.1:${proxy.port}` }).finally(() => clearTimeout(reachable));
    // It listened only once Redis could be reached.
    expect(Date.now() - started).toBeGreaterThanOrEqual(REDIS_REACHABLE_AFTER_MS);
    const api = client(early.url).api(key);
    const statuses = [];
    for (let i = 0; i < LIMIT + 1; i++) statuses.push((await api('GET', '/hooks')).status);
    expect(statuses).toStrictEqual([...Array(LIMIT).fill(200), 429]);
  });
});
