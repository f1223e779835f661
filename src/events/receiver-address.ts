import { BlockList, isIP } from 'node:net';
import { lookup } from 'node:dns/promises';

/**
 * Where a webhook may be sent (spec 6.1: HTTPS receivers), so that a subscription cannot make the service call into
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

export const systemResolver: Resolver = async (hostname) => (await lookup(hostname, { all: true, verbatim: true })) as ResolvedAddress[];

export class ReceiverRefused extends Error {}

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** Addresses no receiver may have: private, loopback, link-local (cloud metadata), multicast, reserved, translated. */
const REFUSED = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12], ['192.0.0.0', 24],
  ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) REFUSED.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  // Unspecified and loopback; IPv4-compatible, -mapped and -translated forms (their IPv4 part is checked on its own
  // only when mapped: the others are refused whole); discard; documentation; 6to4 and Teredo; unique-local (the
  // metadata service's fd00:ec2::254 among them); link-local; multicast.
  ['::', 128], ['::1', 128], ['::', 96], ['64:ff9b::', 96], ['64:ff9b:1::', 48], ['100::', 64], ['2001::', 32], ['2001:db8::', 32], ['2002::', 16],
  ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8],
] as const) REFUSED.addSubnet(network, prefix, 'ipv6');

/** The IPv4 address inside an IPv4-mapped IPv6 one (::ffff:a.b.c.d or ::ffff:xxxx:xxxx), if it is one. */
function mappedIpv4(address: string): string | undefined {
  const match = /^::ffff:(?:(\d+\.\d+\.\d+\.\d+)|([0-9a-f]{1,4}):([0-9a-f]{1,4}))$/i.exec(address);
  if (!match) return undefined;
  if (match[1]) return match[1];
  const high = parseInt(match[2], 16);
  const low = parseInt(match[3], 16);
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}

const familyOf = (address: string) => (isIP(address) === 6 ? 'ipv6' : 'ipv4');

const isLoopback = (address: string) => {
  const plain = mappedIpv4(address) ?? address;
  return LOOPBACK.check(plain, familyOf(plain));
};

/** Why an address may not receive webhooks, or undefined when it may. */
export function refusedAddress(address: string, allowLoopback: boolean): string | undefined {
  const plain = mappedIpv4(address) ?? address;
  if (isLoopback(plain)) return allowLoopback ? undefined : `${address} is a loopback address (allowed only with --allow-http-loopback, for development)`;
  if (REFUSED.check(plain, familyOf(plain))) return `${address} is a private, link-local, multicast or reserved address`;
  return undefined;
}

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
  if (!allowHttpLoopback) throw new ReceiverRefused('receivers must be https://; plain http:// only to a loopback address with --allow-http-loopback (development)');
  return url;
}

/** The URL's host as an address or name (URL keeps IPv6 in brackets; it has already normalized 0x7f.1, 2130706433...). */
const hostOf = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, '$1');

/**
 * The address to connect to for this URL, once every address its host resolves to is acceptable; refuses with the
 * reason otherwise. A plain http:// receiver (development) must resolve to loopback only.
 */
export async function receiverAddress(url: URL, allowLoopback: boolean, resolve: Resolver = systemResolver): Promise<ResolvedAddress> {
  const host = hostOf(url);
  const family = isIP(host);
  let addresses: ResolvedAddress[];
  if (family !== 0) addresses = [{ address: host, family: family as 4 | 6 }];
  else {
    try {
      addresses = await resolve(host);
    } catch (err) {
      throw new ReceiverRefused(`${host} does not resolve (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
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
