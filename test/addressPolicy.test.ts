import { describe, it, expect } from 'vitest';
import { isPublicAddress } from '../src/domain/addressPolicy.js';

const publicAddresses = ['8.8.8.8', '1.1.1.1', '93.184.215.14', '2606:4700:4700::1111', '2a00:1450:4001:80b::200e', '::ffff:8.8.8.8'];

const refused: Array<[string, string]> = [
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback /8'],
  ['::1', 'IPv6 loopback'],
  ['10.0.0.1', 'private'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private'],
  ['192.168.1.1', 'private'],
  ['169.254.169.254', 'link-local / cloud metadata'],
  ['fe80::1', 'IPv6 link-local'],
  ['100.64.0.1', 'CGNAT'],
  ['100.127.255.254', 'CGNAT'],
  ['224.0.0.1', 'multicast'],
  ['ff02::1', 'IPv6 multicast'],
  ['0.0.0.0', 'unspecified'],
  ['0.1.2.3', '0.0.0.0/8'],
  ['::', 'IPv6 unspecified'],
  ['255.255.255.255', 'broadcast'],
  ['240.0.0.1', '240/4'],
  ['fd00::1', 'unique-local'],
  ['fc00::1', 'unique-local'],
  ['192.0.2.1', 'documentation'],
  ['198.51.100.1', 'documentation'],
  ['203.0.113.1', 'documentation'],
  ['2001:db8::1', 'IPv6 documentation'],
  ['198.18.0.1', 'benchmarking'],
  ['198.19.255.255', 'benchmarking'],
  ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
  ['::ffff:7f00:1', 'IPv4-mapped loopback, hex'],
  ['::ffff:10.0.0.1', 'IPv4-mapped private'],
  ['::ffff:169.254.169.254', 'IPv4-mapped metadata'],
  ['::7f00:1', 'IPv4-compatible (deprecated)'],
  ['64:ff9b::7f00:1', 'NAT64'],
  ['64:ff9b::808:808', 'NAT64 even of a public IPv4'],
  ['2002:7f00:1::', '6to4'],
  ['2001::1', 'teredo'],
  ['::ffff:0:7f00:1', 'rfc6145'],
  ['100::1', 'discard-only'],
  ['not-an-ip', 'unparseable'],
  ['', 'empty'],
  ['256.1.1.1', 'out of range'],
  ['localhost', 'name, not an address'],
];

describe('isPublicAddress', () => {
  it.each(publicAddresses)('accepts %s', (ip) => {
    expect(isPublicAddress(ip)).toBe(true);
  });

  it.each(refused)('refuses %s (%s)', (ip) => {
    expect(isPublicAddress(ip)).toBe(false);
  });
});
