import { BlockList, isIP } from 'node:net';
import { lookup } from 'node:dns/promises';

/**
 * Where a webhook may be sent (HTTPS receivers only), so that a subscription cannot make the service call into
 * its own network (SSRF). Checked when subscribing and again before every attempt, on the addresses the name
 * resolves to then; the attempt connects to the address checked (receiver-request.ts), so a name that resolves
 * elsewhere a moment later (DNS rebinding) changes nothing.
 */

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to every address it has (dns.lookup by default; tests pass a stub). */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })) as ResolvedAddress[];

export class ReceiverRefused extends Error {}

/** What a block's addresses may be: a receiver, not one, or one only with --allow-http-loopback (development). */
type Receiver = 'allowed' | 'refused' | 'loopback';

type Row = [prefix: string, name: string, rfc: string, receiver: Receiver];

/**
 * The IANA IPv4 Special-Purpose Address Registry, with multicast from the IPv4 Address Space registry and the rest
 * of the space as the row that holds every address. A block the registry marks globally reachable is allowed,
 * except the PCP and TURN anycast addresses: the nearest server answers them, the site's own gateway as a rule.
 */
export const IPV4_SPECIAL_PURPOSE: readonly Row[] = [
  ['0.0.0.0/0', 'unicast', 'RFC 791', 'allowed'],
  ['0.0.0.0/8', '"This network"', 'RFC 791', 'refused'],
  ['0.0.0.0/32', '"This host on this network"', 'RFC 1122', 'refused'],
  ['10.0.0.0/8', 'Private-Use', 'RFC 1918', 'refused'],
  ['100.64.0.0/10', 'Shared Address Space', 'RFC 6598', 'refused'],
  ['127.0.0.0/8', 'Loopback', 'RFC 1122', 'loopback'],
  ['169.254.0.0/16', 'Link Local', 'RFC 3927', 'refused'],
  ['172.16.0.0/12', 'Private-Use', 'RFC 1918', 'refused'],
  ['192.0.0.0/24', 'IETF Protocol Assignments', 'RFC 6890', 'refused'],
  ['192.0.0.0/29', 'IPv4 Service Continuity Prefix', 'RFC 7335', 'refused'],
  ['192.0.0.8/32', 'IPv4 dummy address', 'RFC 7600', 'refused'],
  ['192.0.0.9/32', 'Port Control Protocol Anycast', 'RFC 7723', 'refused'],
  ['192.0.0.10/32', 'Traversal Using Relays around NAT Anycast', 'RFC 8155', 'refused'],
  ['192.0.0.170/32', 'NAT64/DNS64 Discovery', 'RFC 8880', 'refused'],
  ['192.0.0.171/32', 'NAT64/DNS64 Discovery', 'RFC 8880', 'refused'],
  ['192.0.2.0/24', 'Documentation (TEST-NET-1)', 'RFC 5737', 'refused'],
  ['192.31.196.0/24', 'AS112-v4', 'RFC 7535', 'allowed'],
  ['192.52.193.0/24', 'AMT', 'RFC 7450', 'allowed'],
  ['192.88.99.0/24', 'Deprecated (6to4 Relay Anycast)', 'RFC 7526', 'refused'],
  ['192.88.99.2/32', '6a44-relay anycast address', 'RFC 6751', 'refused'],
  ['192.168.0.0/16', 'Private-Use', 'RFC 1918', 'refused'],
  ['192.175.48.0/24', 'Direct Delegation AS112 Service', 'RFC 7534', 'allowed'],
  ['198.18.0.0/15', 'Benchmarking', 'RFC 2544', 'refused'],
  ['198.51.100.0/24', 'Documentation (TEST-NET-2)', 'RFC 5737', 'refused'],
  ['203.0.113.0/24', 'Documentation (TEST-NET-3)', 'RFC 5737', 'refused'],
  ['224.0.0.0/4', 'Multicast', 'RFC 5771', 'refused'],
  ['240.0.0.0/4', 'Reserved', 'RFC 1112', 'refused'],
  ['255.255.255.255/32', 'Limited Broadcast', 'RFC 919', 'refused'],
];

/**
 * The IANA IPv6 Special-Purpose Address Registry, within the IPv6 Address Space registry's split: global unicast
 * (2000::/3) may receive, the rest may not; multicast, site-local, IPv4-compatible and SIIT's IPv4-translated
 * addresses are named from their RFCs. Every form that carries an IPv4 address (mapped, compatible, translated,
 * NAT64, 6to4, Teredo) is refused whole, whatever IPv4 address it carries: a translator or relay on the way can
 * reach IPv4 addresses this table never sees, and an HTTPS receiver needs none of them (its IPv4 address will do).
 * Globally reachable blocks are allowed, except 64:ff9b::/96 (translated, above) and the PCP, TURN and DNS-SD SRP
 * anycast addresses (the nearest server answers, the site's own as a rule).
 */
export const IPV6_SPECIAL_PURPOSE: readonly Row[] = [
  ['::/0', 'not global unicast', 'RFC 4291', 'refused'],
  ['2000::/3', 'Global Unicast', 'RFC 4291', 'allowed'],
  ['::/128', 'Unspecified Address', 'RFC 4291', 'refused'],
  ['::1/128', 'Loopback Address', 'RFC 4291', 'loopback'],
  ['::/96', 'IPv4-compatible Address', 'RFC 4291', 'refused'],
  ['::ffff:0:0/96', 'IPv4-mapped Address', 'RFC 4291', 'refused'],
  ['::ffff:0:0:0/96', 'IPv4-translated Address', 'RFC 2765', 'refused'],
  ['64:ff9b::/96', 'IPv4-IPv6 Translat.', 'RFC 6052', 'refused'],
  ['64:ff9b:1::/48', 'IPv4-IPv6 Translat.', 'RFC 8215', 'refused'],
  ['100::/64', 'Discard-Only Address Block', 'RFC 6666', 'refused'],
  ['100:0:0:1::/64', 'Dummy IPv6 Prefix', 'RFC 9780', 'refused'],
  ['2001::/23', 'IETF Protocol Assignments', 'RFC 2928', 'refused'],
  ['2001::/32', 'TEREDO', 'RFC 4380', 'refused'],
  ['2001:1::1/128', 'Port Control Protocol Anycast', 'RFC 7723', 'refused'],
  ['2001:1::2/128', 'Traversal Using Relays around NAT Anycast', 'RFC 8155', 'refused'],
  ['2001:1::3/128', 'DNS-SD Service Registration Protocol Anycast', 'RFC 9665', 'refused'],
  ['2001:2::/48', 'Benchmarking', 'RFC 5180', 'refused'],
  ['2001:3::/32', 'AMT', 'RFC 7450', 'allowed'],
  ['2001:4:112::/48', 'AS112-v6', 'RFC 7535', 'allowed'],
  ['2001:10::/28', 'Deprecated (previously ORCHID)', 'RFC 4843', 'refused'],
  ['2001:20::/28', 'ORCHIDv2', 'RFC 7343', 'allowed'],
  ['2001:30::/28', 'Drone Remote ID Protocol Entity Tags (DETs) Prefix', 'RFC 9374', 'allowed'],
  ['2001:db8::/32', 'Documentation', 'RFC 3849', 'refused'],
  ['2002::/16', '6to4', 'RFC 3056', 'refused'],
  ['2620:4f:8000::/48', 'Direct Delegation AS112 Service', 'RFC 7534', 'allowed'],
  ['3fff::/20', 'Documentation', 'RFC 9637', 'refused'],
  ['5f00::/16', 'Segment Routing (SRv6) SIDs', 'RFC 9602', 'refused'],
  ['fc00::/7', 'Unique-Local', 'RFC 4193', 'refused'],
  ['fe80::/10', 'Link-Local Unicast', 'RFC 4291', 'refused'],
  ['fec0::/10', 'Site-Local (deprecated)', 'RFC 3879', 'refused'],
  ['ff00::/8', 'Multicast', 'RFC 4291', 'refused'],
];

interface Block {
  prefix: string;
  name: string;
  rfc: string;
  receiver: Receiver;
  family: 'ipv4' | 'ipv6';
  length: number;
  addresses: BlockList;
}

const familyOf = (address: string) => (isIP(address) === 6 ? 'ipv6' : 'ipv4');

function block([prefix, name, rfc, receiver]: Row): Block {
  const [network, length] = prefix.split('/');
  const family = familyOf(network);
  const addresses = new BlockList();
  addresses.addSubnet(network, Number(length), family);
  return { prefix, name, rfc, receiver, family, length: Number(length), addresses };
}

/** Most specific first, so the first block holding an address is the one that says what it is. */
const BLOCKS = [...IPV4_SPECIAL_PURPOSE, ...IPV6_SPECIAL_PURPOSE].map(block).sort((a, b) => b.length - a.length);

/**
 * The block an address is in. The family is matched too: BlockList holds an IPv4 address inside ::ffff:0:0/96 and
 * ::/0, and an IPv4-mapped one inside IPv4 blocks. Undefined only for text that is no address.
 */
export function specialPurposeBlock(address: string): Block | undefined {
  const family = familyOf(address);
  return BLOCKS.find((b) => b.family === family && b.addresses.check(address, family));
}

/** Why an address may not receive webhooks, or undefined when it may. */
export function refusedAddress(address: string, allowLoopback: boolean): string | undefined {
  const found = specialPurposeBlock(address);
  if (!found) return `${address} is not an IP address`;
  if (found.receiver === 'allowed' || (found.receiver === 'loopback' && allowLoopback)) return undefined;
  const where = `${address} is in ${found.prefix} (${found.name}, ${found.rfc})`;
  return found.receiver === 'loopback'
    ? `${where}: loopback, allowed only with --allow-http-loopback, for development`
    : `${where}, which may not receive webhooks`;
}

const isLoopback = (address: string) => specialPurposeBlock(address)?.receiver === 'loopback';

/** The receiver URL as checked: refuses what no resolution can make acceptable (scheme, credentials, fragment). */
export function receiverUrl(text: string, allowHttpLoopback: boolean): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ReceiverRefused(`"${text}" is not an absolute URL`);
  }
  if (url.username || url.password) throw new ReceiverRefused('a receiver URL must not carry credentials');
  if (url.hash) throw new ReceiverRefused('a receiver URL must not have a fragment');
  if (url.protocol === 'https:') return url;
  if (url.protocol !== 'http:') throw new ReceiverRefused(`receivers must be https:// (got ${url.protocol})`);
  if (!allowHttpLoopback)
    throw new ReceiverRefused(
      'receivers must be https://; plain http:// only to a loopback address with --allow-http-loopback (development)',
    );
  return url;
}

/** The URL's host as an address or name (URL keeps IPv6 in brackets; it has already normalized 0x7f.1, 2130706433...). */
const hostOf = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, '$1');

/**
 * The address to connect to for this URL, once every address its host resolves to is acceptable; refuses with the
 * reason otherwise. A plain http:// receiver (development) must resolve to loopback only.
 */
export async function receiverAddress(
  url: URL,
  allowLoopback: boolean,
  resolve: Resolver = systemResolver,
): Promise<ResolvedAddress> {
  const host = hostOf(url);
  const family = isIP(host);
  let addresses: ResolvedAddress[];
  if (family !== 0) addresses = [{ address: host, family: family as 4 | 6 }];
  else {
    try {
      addresses = await resolve(host);
    } catch (err) {
      throw new ReceiverRefused(
        `${host} does not resolve (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
      );
    }
  }
  if (addresses.length === 0) throw new ReceiverRefused(`${host} does not resolve`);
  for (const { address } of addresses) {
    const reason = refusedAddress(address, allowLoopback);
    if (reason) throw new ReceiverRefused(family === 0 ? `${host} resolves to ${reason}` : reason);
    if (url.protocol === 'http:' && !isLoopback(address)) {
      throw new ReceiverRefused(`plain http:// is accepted only to a loopback address; ${host} is ${address}`);
    }
  }
  return addresses[0];
}
