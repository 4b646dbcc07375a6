import type { LookupAddress } from 'node:dns'
import { BlockList, isIP } from 'node:net'

/**
 * Where an outbound request of ours (a webhook, a status list, a CRL, a published trust list) may connect.
 * The address is someone else's choice (a client's webhook URL, a credential's issuer): without this, a
 * dashboard user or a trusted issuer (or whoever compromised one) could make our server probe its own
 * network, the cloud metadata service (169.254.169.254) or a neighbour's admin page. Only public unicast
 * addresses are reachable; loopback only where the operator allows it (a local mirror, tests), and the
 * networks the operator names (OUTBOUND_ALLOWED_NETWORKS). Judged on addresses, never on names: a name is
 * whatever it resolves to at connect time (src/lib/outbound-fetch.ts).
 */
const NEVER = new BlockList()
// RFC 6890 special-purpose ranges that are not the public internet.
NEVER.addSubnet('0.0.0.0', 8, 'ipv4') // "this network", 0.0.0.0 included
NEVER.addSubnet('10.0.0.0', 8, 'ipv4') // RFC 1918
NEVER.addSubnet('100.64.0.0', 10, 'ipv4') // RFC 6598 carrier-grade NAT
NEVER.addSubnet('169.254.0.0', 16, 'ipv4') // link-local, cloud metadata services
NEVER.addSubnet('172.16.0.0', 12, 'ipv4') // RFC 1918
NEVER.addSubnet('192.0.0.0', 24, 'ipv4') // IETF protocol assignments
NEVER.addSubnet('192.0.2.0', 24, 'ipv4') // TEST-NET-1
NEVER.addSubnet('192.168.0.0', 16, 'ipv4') // RFC 1918
NEVER.addSubnet('198.18.0.0', 15, 'ipv4') // benchmarking
NEVER.addSubnet('198.51.100.0', 24, 'ipv4') // TEST-NET-2
NEVER.addSubnet('203.0.113.0', 24, 'ipv4') // TEST-NET-3
NEVER.addSubnet('224.0.0.0', 4, 'ipv4') // multicast
NEVER.addSubnet('240.0.0.0', 4, 'ipv4') // reserved, broadcast
NEVER.addAddress('::', 'ipv6') // unspecified
NEVER.addSubnet('64:ff9b:1::', 48, 'ipv6') // local-use NAT64
NEVER.addSubnet('100::', 64, 'ipv6') // discard-only
NEVER.addSubnet('2001:db8::', 32, 'ipv6') // documentation
NEVER.addSubnet('fc00::', 7, 'ipv6') // unique local (ULA)
NEVER.addSubnet('fe80::', 10, 'ipv6') // link-local
NEVER.addSubnet('fec0::', 10, 'ipv6') // site-local (deprecated, still routed by some)
NEVER.addSubnet('ff00::', 8, 'ipv6') // multicast

const LOOPBACK = new BlockList()
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4')
LOOPBACK.addAddress('::1', 'ipv6')

/** What the operator allows beyond public addresses: the same for every outbound request of a server. */
export type AddressPolicy = {
  /** Loopback (127.0.0.0/8, ::1): outside production by default (tests, a local mirror or receiver). */
  allowLoopback: boolean
  /**
   * OUTBOUND_ALLOWED_NETWORKS: addresses and CIDR prefixes reachable although private or loopback (an
   * internal webhook receiver, a mirror of the lists), as config.ts has checked them.
   */
  allowedNetworks?: readonly string[] | undefined
}

/** Why an address is refused, or undefined when a connection to it is allowed. */
export type AddressRefusal = 'not_an_address' | 'private_address' | 'loopback_address'

/**
 * Whether we may connect to `address` (an IP literal). IPv6 forms that carry an IPv4 address
 * (IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) are judged by
 * the IPv4 address inside: `::ffff:10.0.0.1` reaches 10.0.0.1.
 */
export function refuseAddress(address: string, policy: AddressPolicy): AddressRefusal | undefined {
  const family = isIP(address)
  if (family === 0) return 'not_an_address'
  if (family === 6) {
    const inner = embeddedIpv4(address)
    if (inner !== undefined) return refuseAddress(inner, policy)
  }
  const type = family === 4 ? 'ipv4' : 'ipv6'
  if (policy.allowedNetworks?.length && allowedList(policy.allowedNetworks).check(address, type)) return undefined
  if (LOOPBACK.check(address, type)) return policy.allowLoopback ? undefined : 'loopback_address'
  if (NEVER.check(address, type)) return 'private_address'
  return undefined
}

/**
 * The addresses a host name stands for without asking DNS, or undefined for a name DNS must answer: an IP
 * literal is itself, and a localhost name (`localhost`, `LOCALHOST`, `foo.localhost`, with or without the
 * trailing dot of an absolute name) is loopback, as RFC 6761 §6.3 has resolvers answer ("SHOULD always
 * return the IP loopback address"), and as Bun's own fetch and many stub resolvers do whatever DNS says.
 * This is resolution, not a policy on names: the addresses it gives are judged like any other.
 */
export function knownAddresses(hostname: string): LookupAddress[] | undefined {
  const bare = hostname.replace(/^\[(.*)\]$/, '$1')
  const family = isIP(bare)
  if (family !== 0) return [{ address: bare, family }]
  if (/(^|\.)localhost\.?$/i.test(bare)) {
    return [
      { address: '127.0.0.1', family: 4 },
      { address: '::1', family: 6 },
    ]
  }
  return undefined
}

const allowedLists = new WeakMap<readonly string[], BlockList>()

function allowedList(entries: readonly string[]): BlockList {
  let list = allowedLists.get(entries)
  if (!list) {
    list = new BlockList()
    for (const entry of entries) addNetwork(list, entry)
    allowedLists.set(entries, list)
  }
  return list
}

/** `10.0.5.7` (one address) or `10.0.5.0/24`; a malformed entry throws (BlockList's own error). */
function addNetwork(list: BlockList, entry: string) {
  const [address = '', prefix] = entry.split('/')
  const family = isIP(address)
  list.addSubnet(address, prefix === undefined ? (family === 4 ? 32 : 128) : Number(prefix), family === 4 ? 'ipv4' : 'ipv6')
}

/** The IPv4 address an IPv6 address stands for, where it stands for one. */
function embeddedIpv4(address: string): string | undefined {
  const words = expandIpv6(address)
  if (!words) return undefined
  const v4 = (high: number, low: number) => `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`
  const zeros = (from: number, to: number) => words.slice(from, to).every((word) => word === 0)
  // ::ffff:a.b.c.d (mapped), ::a.b.c.d (compatible, deprecated), ::ffff:0:a.b.c.d (translated).
  if (zeros(0, 5) && (words[5] === 0xffff || words[5] === 0)) return zeros(0, 6) && words[6] === 0 && words[7]! <= 1 ? undefined : v4(words[6]!, words[7]!)
  if (zeros(0, 4) && words[4] === 0xffff && words[5] === 0) return v4(words[6]!, words[7]!)
  // 64:ff9b::/96, the well-known NAT64 prefix (RFC 6052).
  if (words[0] === 0x64 && words[1] === 0xff9b && zeros(2, 6)) return v4(words[6]!, words[7]!)
  // 2002:AABB:CCDD::/16, 6to4 (RFC 3056).
  if (words[0] === 0x2002) return v4(words[1]!, words[2]!)
  return undefined
}

/** Eight 16-bit words of an IPv6 address (a trailing dotted IPv4 part included), or undefined. */
function expandIpv6(address: string): number[] | undefined {
  let text = address.toLowerCase().replace(/%.*$/, '')
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text)
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number]
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const [head, tail] = text.split('::') as [string, string | undefined]
  const part = (s: string | undefined) => (s ? s.split(':').map((word) => Number.parseInt(word, 16)) : [])
  const left = part(head)
  const right = part(tail)
  const words = tail === undefined ? left : [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right]
  return words.length === 8 && words.every((word) => Number.isInteger(word) && word >= 0 && word <= 0xffff) ? words : undefined
}
