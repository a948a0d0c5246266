export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Polls `check` every 50 ms until it holds; fails after `timeoutMs` with `describe` (text, or a
 * function called then, such as a process's output so far). A check that throws fails at once.
 */
export async function waitUntil(check: () => Promise<boolean> | boolean, timeoutMs = 10_000, describe?: string | (() => string)) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await sleep(50);
  }
  const detail = typeof describe === 'function' ? describe() : describe;
  throw new Error(`condition not met within ${timeoutMs} ms${detail ? `\n${detail}` : ''}`);
}
