import ipaddr from 'ipaddr.js';

// ipaddr.js reports these as 'unicast' although they are not globally routable targets.
// Only 2000::/3 is allocated as IPv6 global unicast (this also refuses the deprecated
// IPv4-compatible ::/96 form), and 2001::/23 holds IETF protocol assignments (teredo,
// benchmarking, ORCHID, ...) that no webhook receiver lives in.
const IPV6_GLOBAL_UNICAST = ipaddr.IPv6.parseCIDR('2000::/3');
const IPV6_IETF_PROTOCOL = ipaddr.IPv6.parseCIDR('2001::/23');

/**
 * True only for globally routable unicast addresses; anything unparseable is refused.
 * ipaddr.process() unwraps IPv4-mapped IPv6 (::ffff:a.b.c.d), so the embedded IPv4 is judged.
 * Other IPv4-embedding IPv6 forms (NAT64, 6to4, teredo, rfc6145) get their own range names
 * and are therefore refused outright.
 */
export function isPublicAddress(ip: string): boolean {
  let address: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    address = ipaddr.process(ip);
  } catch {
    return false;
  }
  if (address.range() !== 'unicast') return false;
  if (address.kind() === 'ipv6') {
    return address.match(IPV6_GLOBAL_UNICAST) && !address.match(IPV6_IETF_PROTOCOL);
  }
  return true;
}
