/**
 * Figure 9: how long `npm start` takes to answer /healthz when restarted with nothing changed
 * (the store already made, the build fresh), against `node dist/src/main/web.js` on the same
 * store: what npm and the build check add to the process's own start.
 */
import { spawn } from 'node:child_process';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../../kit/processes.js';
import { median } from '../../kit/statistics.js';
import { waitUntil } from '../../kit/waiting.js';
import type { BenchContext } from '../context.js';
import { fmt, ratioRow, type FigureResult } from '../results.js';

const ROUNDS = 5;
const GOAL_SECONDS = 2;
const BUILT = join(process.cwd(), 'dist/src/main/web.js');

/** Seconds from spawning `command` (in a process group of its own) to its first /healthz 200; then stops the group. */
async function secondsToHealthy(command: string, args: string[], env: Record<string, string>) {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(command, args, { env: { PATH: process.env.PATH ?? '', ...env, HOST: '127.0.0.1', PORT: String(port) }, detached: true, stdio: 'ignore' });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  try {
    const healthy = async () => (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined))?.ok === true;
    await waitUntil(async () => child.exitCode === null && (await healthy()), 60_000, `${command} ${args.join(' ')} never answered /healthz`);
    return (performance.now() - started) / 1000;
  } finally {
    process.kill(-child.pid!, 'SIGTERM');
    await exited;
  }
}

export async function restartTime(ctx: BenchContext): Promise<FigureResult> {
  const env = { DATA_DIR: ctx.tempDir('restart'), INTERNAL_API_TOKEN: ctx.token, LOG_LEVEL: 'warn' };
  ctx.progress('figure 9: restart time, npm start against node dist/src/main/web.js');
  // The first start makes the store (a copy of the blank cluster); a restart finds it.
  await secondsToHealthy(process.execPath, [BUILT], env);
  const builtBefore = statSync(BUILT).mtimeMs;
  const npmStart: number[] = [];
  const node: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    npmStart.push(await secondsToHealthy('npm', ['start', '--silent'], env));
    node.push(await secondsToHealthy(process.execPath, [BUILT], env));
  }
  const rebuilt = statSync(BUILT).mtimeMs !== builtBefore;
  const measured = median(npmStart);
  return {
    data: { restartTime: { npmStartSeconds: npmStart, nodeSeconds: node, rebuilt } },
    rows: [
      ratioRow({
        figure: '9',
        what: `Restart time with nothing changed: \`npm start\` to its first /healthz 200, embedded (PGlite store already made), median of ${ROUNDS} (${npmStart.map((s) => fmt(s, 2)).join(' / ')} s)${rebuilt ? '; it REBUILT, so sources were newer than dist/' : ''}`,
        measured: `${fmt(measured, 2)} s`,
        reference: `${fmt(median(node), 2)} s: node dist/src/main/web.js on the same store (${node.map((s) => fmt(s, 2)).join(' / ')} s)`,
        ratio: measured / median(node),
        goalText: { text: `< ${GOAL_SECONDS} s`, met: !rebuilt && measured < GOAL_SECONDS },
      }),
    ],
  };
}
