import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../src/storage/migrations.js';

/**
 * A migration that shipped is never edited: a database that applied it never applies the edit,
 * so it would differ from a new install. Each one's SQL is pinned by its SHA-256 here; a new
 * migration adds its line.
 */
const SHIPPED: Array<[version: number, name: string, sha256: string]> = [
  [1, 'initial', '7ebdc5a9ab8e5594c0c9be8ea8b64dfaeb717a3829338e04a7f23f6a50dddc6a'],
  [2, 'paced delivery', '10fd594d3fa44852a1ef96d84b00a7da8b4edbeb5277923fbb731d762795d5d6'],
  [3, 'retention', 'cd92e06fe9d9f1346a182f361ec31bfc2e4c82ac4caa913c495923d848e28e25'],
  [4, 'claim tokens', 'cce9dc3de7c6ec2168f09360cf420ead0f6649099c25693d9699bf5b0f826c2b'],
  [5, 'overdue deliveries', '985ba5789168e1e5d82330fd4727e8f88d443b6cc7a0f7d51c4a08770ca86eb2'],
  [6, 'hook health', 'fece432a4ed85a779c44d4c1d6841e28763db75f70d6c7ea29f9074ec62bc7e5'],
  [7, 'day partitions', '825f1cf07f3d6110fb0ffaa5fbcfaf83e3769e8cae605ab1e84b93c6aadcd674'],
  [8, 'deliveries found by their key', 'c05f14b4ce7797ad7894af78ee75cd0b22b7be21e1033e34705c39b03e500d9f'],
  [9, 'event outbox', 'b4b50e494e6313cf2de9e52fa1de8c3488a7ceb3384e35b3802aedaf035bc60e'],
  [10, 'portal', 'caf1df9826f1fe41387bd62ae34887438e1f2f10920cd70a5e2dc871995f5635'],
  [11, 'events feed', 'ca1776c51e7ea154d068533dbf0a3494d33197ab457eb0d9e7313f4f661ea5b8'],
  [12, 'events fanned out to the subscriptions their statement saw', 'd706aa4543d2b10865196c07c4f656ac4e1edf7a0ce5a287fb948152c6d2042f'],
];

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('the migrations', () => {
  it('keep every version that shipped, in order, under its name and with its SQL unchanged', () => {
    expect(MIGRATIONS.map(({ version, name, sql }) => [version, name, sha256(sql)])).toStrictEqual(SHIPPED);
  });
});
