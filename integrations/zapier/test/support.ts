import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { createAppTester } from 'zapier-platform-core';
import { INTERNAL_TOKEN } from '../../../test/support/app.js';
import { client } from '../../../test/support/client.js';
import { startWeb, stopAllProcesses } from '../../../test/support/processes.js';
import { startReceiver, type ReceivedRequest } from '../../../test/support/receiver.js';

/** What the tests call on the app (it is CommonJS JavaScript, as Zapier apps are). */
type Operation = (z: never, bundle: never) => unknown;
export interface FieldDefinition {
  key: string;
  label?: string;
}
export interface HookTrigger {
  key: string;
  operation: Record<'performSubscribe' | 'performUnsubscribe' | 'perform' | 'performList', Operation> & {
    sample: Record<string, unknown>;
    outputFields: FieldDefinition[];
  };
}
export interface ContactHooksApp {
  authentication: { test: Operation; connectionLabel: Operation };
  triggers: Record<'new_conversation' | 'missed_call' | 'new_contact', HookTrigger>;
  creates: {
    create_or_update_contact: { operation: { perform: Operation; sample: Record<string, unknown>; outputFields: FieldDefinition[] } };
  };
}

const require = createRequire(import.meta.url);
export const app = require('../index.js') as ContactHooksApp;

/** zapier-platform-core's own tester: runs an operation as Zapier would, with the app's middleware. */
const appTester = createAppTester(app);
export const run = (operation: Operation, bundle: Record<string, unknown>) => appTester<unknown, never>(operation as never, bundle as never);

/** The fields of a `z.errors.Error` (its message is JSON: {message, code, status}). */
export function appError(error: unknown) {
  expect(error).toMatchObject({ name: 'AppError' });
  return JSON.parse((error as Error).message) as { message: string; code: string; status: number };
}

/** The rejection of a promise, for tests that look inside the error. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the operation to fail, and it succeeded');
}

/**
 * The service as a real embedded-mode process (PGlite in a temp dir, in-process delivery) and a
 * real HTTPS receiver standing in for Zapier's hook URLs; `answer` sets what a receiver path
 * replies. `close` stops both and removes the data.
 */
export async function startServiceAndReceiver(env: Record<string, string> = {}) {
  const answers: Record<string, number> = {};
  const receiver = await startReceiver({ respond: (request) => ({ status: answers[request.path] ?? 200 }) });
  const dataDir = mkdtempSync(join(tmpdir(), 'contact-hooks-zapier-'));
  const service = await startWeb({
    DATA_DIR: dataDir,
    INTERNAL_API_TOKEN: INTERNAL_TOKEN,
    DELIVERY_ALLOW_PRIVATE_NETWORKS: 'true',
    ...env,
  });
  const http = client(service.url);
  return {
    receiver,
    service,
    http,
    answer(path: string, status: number) {
      answers[path] = status;
    },
    /** Issues a key through the first-party API and returns its id and the connection Zapier would store. */
    async connect(accountId: string, body: { source?: string; name?: string } = { source: 'zapier' }) {
      const issued = await http.internal('POST', `/accounts/${accountId}/keys`, body);
      if (issued.status !== 201) throw new Error(`key not issued: ${JSON.stringify(issued)}`);
      return { keyId: issued.body.id as string, authData: { base_url: service.url, api_key: issued.body.key as string } };
    },
    /** The bodies the receiver got on a path, parsed. */
    received(path: string) {
      return receiver.requests.filter((request: ReceivedRequest) => request.path === path).map((request) => JSON.parse(request.body) as unknown);
    },
    async close() {
      await stopAllProcesses();
      await receiver.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export type ServiceAndReceiver = Awaited<ReturnType<typeof startServiceAndReceiver>>;
