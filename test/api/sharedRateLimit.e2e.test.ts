import { afterAll, beforeAll, expect, it } from 'vitest';
import { startStack } from '../support/stack.js';
import { client } from '../support/client.js';
import { startWeb } from '../support/processes.js';
import { describeEachRedisShape } from '../support/redisShapes.js';

const LIMIT = 10;

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
