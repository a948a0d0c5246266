import { pino } from 'pino';
import { ConfigError, loadConfig, loadDotEnv, type Config } from '../config.js';
import { DataDirBusyError } from '../storage/dataDirLock.js';

/** Log lines are written out at least this often, or when 4 KiB have gathered. */
const LOG_FLUSH_MS = 100;

/**
 * JSON logs; anything that could hold a key is redacted even if a future log line includes it.
 * Lines are buffered and written 4 KiB or 100 ms at a time, not one write each: a busy process
 * logs a line per request and per delivery, and a write per line costs it a visible share of its
 * CPU. What is buffered is written before the process exits; a crash loses at most 100 ms of lines.
 */
export function createLogger(config: Pick<Config, 'LOG_LEVEL'>, role: string) {
  const destination = pino.destination({ dest: 1, sync: false, minLength: 4096 });
  setInterval(() => destination.flush(), LOG_FLUSH_MS).unref();
  process.on('exit', () => destination.flushSync());
  return pino(
    {
      level: config.LOG_LEVEL,
      base: { role, pid: process.pid },
      redact: ['req.headers.authorization', 'headers.authorization', 'key', '*.key'],
    },
    destination,
  );
}

/** Prints a start-up problem as one clear line and exits non-zero, instead of a stack trace. */
export function exitWith(message: string): never {
  process.stderr.write(`contact-hooks: ${message}\n`);
  process.exit(1);
}

/**
 * Runs `shutdown` once on SIGTERM or SIGINT, then exits 0. Past the grace period, or if shutdown
 * fails, it exits 1 anyway: a platform's SIGKILL would come next.
 */
export function onShutdownSignal(log: pino.Logger, graceMs: number, shutdown: () => Promise<void>) {
  let started = false;
  const handle = (signal: NodeJS.Signals) => {
    if (started) return;
    started = true;
    log.info({ signal, graceMs }, 'shutting down');
    setTimeout(() => {
      log.error('grace period over; exiting with work unfinished');
      process.exit(1);
    }, graceMs).unref();
    shutdown().then(
      () => process.exit(0),
      (error) => {
        log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', handle);
  process.on('SIGINT', handle);
}

/**
 * The start and exit every entry point shares: reads `.env`, parses the configuration once, runs `main`, and
 * turns what an operator must fix (a bad setting, a DATA_DIR another process holds) into one
 * clear line and exit 1. Anything else is a bug, and crashes with its stack.
 */
export async function runProcess(main: (config: Config) => Promise<void>) {
  try {
    loadDotEnv();
    await main(loadConfig());
  } catch (error) {
    if (error instanceof ConfigError || error instanceof DataDirBusyError) exitWith(error.message);
    throw error;
  }
}
