/** A failure to report as one line on stderr, exit status 1. */
export class CliError extends Error {}

/** A key as the CLI prints it: never a secret, timestamps as ISO 8601. */
export interface ListedKey {
  id: string;
  account_id: string;
  source: string;
  name: string | null;
  created_at: string;
  revoked_at: string | null;
}

export interface CreatedKey {
  id: string;
  key: string;
  account_id: string;
  source: string;
}

export interface RotatedKey extends CreatedKey {
  name: string | null;
  created_at: string;
}

/**
 * The key operations, done on the store (storeBackend.ts) or through the first-party API of the
 * server that holds DATA_DIR (httpBackend.ts): the CLI's two ways to the same use cases.
 */
export interface KeyBackend {
  create(accountId: string, options: { source?: string | undefined; name?: string | undefined }): Promise<CreatedKey>;
  list(accountId: string): Promise<ListedKey[]>;
  /** Undefined when no live key has that id. */
  rotate(keyId: string): Promise<RotatedKey | undefined>;
  /** False when no key has that id; revoking a revoked key is not an error. */
  revoke(keyId: string): Promise<boolean>;
  close(): Promise<void>;
}
