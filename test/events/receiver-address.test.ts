import t from 'tap';
import {
  IPV4_SPECIAL_PURPOSE,
  IPV6_SPECIAL_PURPOSE,
  receiverAddress,
  receiverUrl,
  ReceiverRefused,
  refusedAddress,
  specialPurposeBlock,
  type Resolver,
} from '../../src/events/receiver-address.js';

/** A local resolver stub: no test asks a real DNS server, and no outside address is ever connected to. */
const ZONE: Record<string, string[]> = {
  'hooks.partner.example': ['93.184.215.14'],
  'v6.partner.example': ['2606:4700:4700::1111'],
  'intranet.partner.example': ['10.1.2.3'],
  'rebind.partner.example': ['93.184.215.14', '127.0.0.1'],
  'metadata.partner.example': ['169.254.169.254'],
  'v6-private.partner.example': ['fd12:3456:789a::1'],
  'mapped.partner.example': ['::ffff:192.168.1.1'],
  'carrier.partner.example': ['100.64.0.7'],
  'siit.partner.example': ['::ffff:0:7f00:1'],
  'siit-upper.partner.example': ['::FFFF:0:7F00:1'],
  'nat64.partner.example': ['64:ff9b::10.0.0.1'],
  'nat64-public.partner.example': ['64:ff9b::5db8:d822'],
  'nat64-local.partner.example': ['64:ff9b:1::a9fe:a9fe'],
  'as112.partner.example': ['192.175.48.6', '2620:4f:8000::6'],
  'garbage.partner.example': ['not-an-address'],
  localhost: ['127.0.0.1', '::1'],
  'nowhere.partner.example': [],
};
const stub: Resolver = async (host) => {
  const addresses = ZONE[host];
  if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
};

async function refusal(text: string, allowHttpLoopback = false): Promise<string> {
  try {
    await receiverAddress(receiverUrl(text, allowHttpLoopback), allowHttpLoopback, stub);
    return 'accepted';
  } catch (err) {
    if (!(err instanceof ReceiverRefused)) throw err;
    return err.message;
  }
}

const REFUSED: Array<[string, RegExp]> = [
  [
    'https://10.0.0.1/hook',
    /10\.0\.0\.1 is in 10\.0\.0\.0\/8 \(Private-Use, RFC 1918\), which may not receive webhooks/,
  ],
  ['https://10.255.255.255/', /Private-Use/],
  ['https://172.16.0.1/', /Private-Use/],
  ['https://172.31.255.254/', /Private-Use/],
  ['https://192.168.0.10/', /Private-Use/],
  ['https://127.0.0.1/', /loopback/],
  ['https://127.1.2.3/', /loopback/],
  ['https://0.0.0.0/', /This host on this network/],
  ['https://169.254.169.254/latest/meta-data/', /Link Local/],
  ['https://169.254.0.1/', /Link Local/],
  ['https://100.64.0.1/', /Shared Address Space/],
  ['https://224.0.0.1/', /Multicast/],
  ['https://239.255.255.250/', /Multicast/],
  ['https://255.255.255.255/', /Limited Broadcast/],
  ['https://198.18.0.1/', /Benchmarking/],
  ['https://[::1]/', /loopback/],
  ['https://[::]/', /Unspecified/],
  ['https://[::ffff:127.0.0.1]/', /IPv4-mapped/],
  ['https://[::ffff:7f00:1]/', /IPv4-mapped/],
  ['https://[::ffff:10.0.0.1]/', /IPv4-mapped/],
  ['https://[::ffff:a9fe:a9fe]/', /IPv4-mapped/],
  ['https://[::127.0.0.1]/', /IPv4-compatible/],
  ['https://[64:ff9b::a00:1]/', /64:ff9b::\/96 \(IPv4-IPv6 Translat\., RFC 6052\)/],
  ['https://[2002:7f00:1::]/', /6to4/],
  ['https://[fd00:ec2::254]/', /Unique-Local/],
  ['https://[fc00::1]/', /Unique-Local/],
  ['https://[fe80::1]/', /Link-Local Unicast/],
  ['https://[ff02::1]/', /Multicast/],
  ['https://2130706433/', /loopback/],
  ['https://0x7f000001/', /loopback/],
  ['https://0177.0.0.1/', /loopback/],
  ['https://017700000001/', /loopback/],
  ['https://127.1/', /loopback/],
  ['https://3232235777/', /192\.168\.1\.1 is in 192\.168\.0\.0\/16/],
  ['https://0xa9.0xfe.0xa9.0xfe/', /169\.254\.169\.254 is in 169\.254\.0\.0\/16 \(Link Local/],
  ['https://intranet.partner.example/', /resolves to 10\.1\.2\.3/],
  ['https://metadata.partner.example/', /resolves to 169\.254\.169\.254/],
  ['https://rebind.partner.example/', /resolves to 127\.0\.0\.1/],
  ['https://v6-private.partner.example/', /resolves to fd12/],
  ['https://mapped.partner.example/', /resolves to ::ffff:192\.168\.1\.1/],
  ['https://carrier.partner.example/', /resolves to 100\.64/],
  [
    'https://siit.partner.example/',
    /resolves to ::ffff:0:7f00:1 is in ::ffff:0:0:0\/96 \(IPv4-translated Address, RFC 2765\)/,
  ],
  ['https://nat64-public.partner.example/', /resolves to 64:ff9b::5db8:d822 is in 64:ff9b::\/96/],
  ['https://garbage.partner.example/', /resolves to not-an-address is not an IP address/],
  ['https://localhost/', /resolves to 127\.0\.0\.1/],
  ['https://localhost./', /does not resolve/],
  ['https://unknown.partner.example/', /does not resolve \(ENOTFOUND\)/],
  ['https://nowhere.partner.example/', /does not resolve/],
  ['http://hooks.partner.example/', /must be https/],
  ['http://127.0.0.1:8080/', /must be https/],
  ['ftp://hooks.partner.example/', /must be https/],
  ['file:///etc/passwd', /must be https/],
  ['gopher://127.0.0.1:6379/', /must be https/],
  ['https://user:pass@hooks.partner.example/', /credentials/],
  ['https://hooks.partner.example/#frag', /fragment/],
  ['/relative/hook', /not an absolute URL/],
];

t.test(`${REFUSED.length} receivers that would reach inside are refused, with the reason`, async (t) => {
  t.ok(REFUSED.length >= 30);
  for (const [url, reason] of REFUSED) t.match(await refusal(url), reason, url);
});

t.test('public receivers are accepted, and the address checked is the one returned to connect to', async (t) => {
  t.equal(await refusal('https://hooks.partner.example/webhooks'), 'accepted');
  t.equal(await refusal('https://v6.partner.example:8443/in'), 'accepted');
  t.equal(await refusal('https://93.184.215.14/'), 'accepted');
  t.same(await receiverAddress(new URL('https://hooks.partner.example/'), false, stub), {
    address: '93.184.215.14',
    family: 4,
  });
});

t.test('the development flag allows loopback only, and plain http only to loopback', async (t) => {
  t.equal(await refusal('http://127.0.0.1:8080/hook', true), 'accepted');
  t.equal(await refusal('http://[::1]:8080/hook', true), 'accepted');
  t.equal(await refusal('http://localhost:8080/hook', true), 'accepted');
  t.equal(await refusal('https://127.0.0.1/hook', true), 'accepted');
  t.match(await refusal('http://hooks.partner.example/', true), /only to a loopback address/);
  t.match(await refusal('http://10.0.0.1/', true), /Private-Use/, 'private ranges stay refused');
  t.match(await refusal('https://169.254.169.254/', true), /Link Local/);
  t.match(await refusal('http://rebind.partner.example/', true), /only to a loopback address/);
});

type Verdict = 'accepted' | 'refused' | 'loopback';

/** How an address is judged: accepted, refused, or accepted only with --allow-http-loopback. */
const verdict = (address: string): Verdict =>
  refusedAddress(address, false) === undefined
    ? 'accepted'
    : refusedAddress(address, true) === undefined
      ? 'loopback'
      : 'refused';

/**
 * One row per block of the two tables: the block, how an address in it is judged, its first and last address (or,
 * where a more specific block holds those, the first and last that only this block holds), and an address just
 * outside with how the next rule judges it.
 */
const BLOCKS: Array<
  [block: string, inside: Verdict, first: string, last: string, outside: string, outsideVerdict: Verdict]
> = [
  ['0.0.0.0/0', 'accepted', '1.0.0.0', '223.255.255.255', '0.255.255.255', 'refused'],
  ['0.0.0.0/8', 'refused', '0.0.0.1', '0.255.255.255', '1.0.0.0', 'accepted'],
  ['0.0.0.0/32', 'refused', '0.0.0.0', '0.0.0.0', '0.0.0.1', 'refused'],
  ['10.0.0.0/8', 'refused', '10.0.0.0', '10.255.255.255', '11.0.0.0', 'accepted'],
  ['100.64.0.0/10', 'refused', '100.64.0.0', '100.127.255.255', '100.128.0.0', 'accepted'],
  ['127.0.0.0/8', 'loopback', '127.0.0.0', '127.255.255.255', '128.0.0.0', 'accepted'],
  ['169.254.0.0/16', 'refused', '169.254.0.0', '169.254.255.255', '169.255.0.0', 'accepted'],
  ['172.16.0.0/12', 'refused', '172.16.0.0', '172.31.255.255', '172.32.0.0', 'accepted'],
  ['192.0.0.0/24', 'refused', '192.0.0.11', '192.0.0.255', '192.0.1.0', 'accepted'],
  ['192.0.0.0/29', 'refused', '192.0.0.0', '192.0.0.7', '192.0.0.8', 'refused'],
  ['192.0.0.8/32', 'refused', '192.0.0.8', '192.0.0.8', '192.0.0.9', 'refused'],
  ['192.0.0.9/32', 'refused', '192.0.0.9', '192.0.0.9', '192.0.0.10', 'refused'],
  ['192.0.0.10/32', 'refused', '192.0.0.10', '192.0.0.10', '192.0.0.11', 'refused'],
  ['192.0.0.170/32', 'refused', '192.0.0.170', '192.0.0.170', '192.0.0.169', 'refused'],
  ['192.0.0.171/32', 'refused', '192.0.0.171', '192.0.0.171', '192.0.0.172', 'refused'],
  ['192.0.2.0/24', 'refused', '192.0.2.0', '192.0.2.255', '192.0.3.0', 'accepted'],
  ['192.31.196.0/24', 'accepted', '192.31.196.0', '192.31.196.255', '192.31.197.0', 'accepted'],
  ['192.52.193.0/24', 'accepted', '192.52.193.0', '192.52.193.255', '192.52.194.0', 'accepted'],
  ['192.88.99.0/24', 'refused', '192.88.99.0', '192.88.99.255', '192.88.100.0', 'accepted'],
  ['192.88.99.2/32', 'refused', '192.88.99.2', '192.88.99.2', '192.88.99.3', 'refused'],
  ['192.168.0.0/16', 'refused', '192.168.0.0', '192.168.255.255', '192.169.0.0', 'accepted'],
  ['192.175.48.0/24', 'accepted', '192.175.48.0', '192.175.48.255', '192.175.49.0', 'accepted'],
  ['198.18.0.0/15', 'refused', '198.18.0.0', '198.19.255.255', '198.20.0.0', 'accepted'],
  ['198.51.100.0/24', 'refused', '198.51.100.0', '198.51.100.255', '198.51.101.0', 'accepted'],
  ['203.0.113.0/24', 'refused', '203.0.113.0', '203.0.113.255', '203.0.114.0', 'accepted'],
  ['224.0.0.0/4', 'refused', '224.0.0.0', '239.255.255.255', '223.255.255.255', 'accepted'],
  ['240.0.0.0/4', 'refused', '240.0.0.0', '255.255.255.254', '239.255.255.255', 'refused'],
  ['255.255.255.255/32', 'refused', '255.255.255.255', '255.255.255.255', '255.255.255.254', 'refused'],

  ['::/0', 'refused', '4000::', '1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', '2000::', 'accepted'],
  ['2000::/3', 'accepted', '2000::', '3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', '4000::', 'refused'],
  ['::/128', 'refused', '::', '::', '::2', 'refused'],
  ['::1/128', 'loopback', '::1', '::1', '::2', 'refused'],
  ['::/96', 'refused', '::2', '::ffff:ffff', '::1:0:0', 'refused'],
  ['::ffff:0:0/96', 'refused', '::ffff:0:0', '::ffff:ffff:ffff', '::1:0:0:0', 'refused'],
  ['::ffff:0:0:0/96', 'refused', '::ffff:0:0:0', '::ffff:0:ffff:ffff', '::ffff:1:0:0', 'refused'],
  ['64:ff9b::/96', 'refused', '64:ff9b::', '64:ff9b::ffff:ffff', '64:ff9b::1:0:0', 'refused'],
  ['64:ff9b:1::/48', 'refused', '64:ff9b:1::', '64:ff9b:1:ffff:ffff:ffff:ffff:ffff', '64:ff9b:2::', 'refused'],
  ['100::/64', 'refused', '100::', '100::ffff:ffff:ffff:ffff', '100:0:0:1::', 'refused'],
  ['100:0:0:1::/64', 'refused', '100:0:0:1::', '100::1:ffff:ffff:ffff:ffff', '100:0:0:2::', 'refused'],
  ['2001::/23', 'refused', '2001:1::4', '2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff', '2001:200::', 'accepted'],
  ['2001::/32', 'refused', '2001::', '2001:0:ffff:ffff:ffff:ffff:ffff:ffff', '2001:1::', 'refused'],
  ['2001:1::1/128', 'refused', '2001:1::1', '2001:1::1', '2001:1::', 'refused'],
  ['2001:1::2/128', 'refused', '2001:1::2', '2001:1::2', '2001:1::3', 'refused'],
  ['2001:1::3/128', 'refused', '2001:1::3', '2001:1::3', '2001:1::4', 'refused'],
  ['2001:2::/48', 'refused', '2001:2::', '2001:2:0:ffff:ffff:ffff:ffff:ffff', '2001:2:1::', 'refused'],
  ['2001:3::/32', 'accepted', '2001:3::', '2001:3:ffff:ffff:ffff:ffff:ffff:ffff', '2001:4::', 'refused'],
  ['2001:4:112::/48', 'accepted', '2001:4:112::', '2001:4:112:ffff:ffff:ffff:ffff:ffff', '2001:4:113::', 'refused'],
  ['2001:10::/28', 'refused', '2001:10::', '2001:1f:ffff:ffff:ffff:ffff:ffff:ffff', '2001:20::', 'accepted'],
  [
    '2001:20::/28',
    'accepted',
    '2001:20::',
    '2001:2f:ffff:ffff:ffff:ffff:ffff:ffff',
    '2001:1f:ffff:ffff:ffff:ffff:ffff:ffff',
    'refused',
  ],
  ['2001:30::/28', 'accepted', '2001:30::', '2001:3f:ffff:ffff:ffff:ffff:ffff:ffff', '2001:40::', 'refused'],
  ['2001:db8::/32', 'refused', '2001:db8::', '2001:db8:ffff:ffff:ffff:ffff:ffff:ffff', '2001:db9::', 'accepted'],
  ['2002::/16', 'refused', '2002::', '2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff', '2003::', 'accepted'],
  [
    '2620:4f:8000::/48',
    'accepted',
    '2620:4f:8000::',
    '2620:4f:8000:ffff:ffff:ffff:ffff:ffff',
    '2620:4f:8001::',
    'accepted',
  ],
  ['3fff::/20', 'refused', '3fff::', '3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff', '3fff:1000::', 'accepted'],
  ['5f00::/16', 'refused', '5f00::', '5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff', '5f01::', 'refused'],
  ['fc00::/7', 'refused', 'fc00::', 'fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'fe00::', 'refused'],
  ['fe80::/10', 'refused', 'fe80::', 'febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'fec0::', 'refused'],
  ['fec0::/10', 'refused', 'fec0::', 'feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'ff00::', 'refused'],
  [
    'ff00::/8',
    'refused',
    'ff00::',
    'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
    'feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
    'refused',
  ],
];

t.test(
  'every block of the two special-purpose tables: first and last address inside, and one just outside',
  async (t) => {
    t.same(
      BLOCKS.map(([block]) => block).sort(),
      [...IPV4_SPECIAL_PURPOSE, ...IPV6_SPECIAL_PURPOSE].map(([prefix]) => prefix).sort(),
      'one case per row',
    );
    for (const [block, inside, first, last, outside, outsideVerdict] of BLOCKS) {
      t.equal(verdict(first), inside, `${first} (first in ${block})`);
      t.equal(verdict(last), inside, `${last} (last in ${block})`);
      t.equal(specialPurposeBlock(first)?.prefix, block, `${first} is judged by ${block}`);
      t.equal(specialPurposeBlock(last)?.prefix, block, `${last} is judged by ${block}`);
      t.equal(verdict(outside), outsideVerdict, `${outside} (just outside ${block})`);
      t.not(specialPurposeBlock(outside)?.prefix, block, `${outside} is judged by another rule`);
    }
  },
);

/** IPv4 inside IPv6: every spelling of every form is refused, whatever IPv4 address it carries. */
const EMBEDDED = [
  'https://[::ffff:0:7f00:1]/',
  'https://[::ffff:0:127.0.0.1]/',
  'https://[0:0:0:0:ffff:0:7f00:1]/',
  'https://[0000:0000:0000:0000:FFFF:0000:7F00:0001]/',
  'https://[::FfFf:0:7F00:1]/',
  'https://[::ffff:0:a9fe:a9fe]/',
  'https://[::ffff:0:5db8:d822]/',
  'https://[::ffff:127.0.0.1]/',
  'https://[0:0:0:0:0:ffff:7f00:1]/',
  'https://[::ffff:93.184.216.34]/',
  'https://[::127.0.0.1]/',
  'https://[::7f00:1]/',
  'https://[::93.184.216.34]/',
  'https://[64:ff9b::127.0.0.1]/',
  'https://[64:ff9b::a00:1]/',
  'https://[64:FF9B:0:0:0:0:0A00:0001]/',
  'https://[64:ff9b::93.184.216.34]/',
  'https://[64:ff9b:1::a00:1]/',
  'https://[64:ff9b:1:7f00:1::]/',
  'https://[2002:7f00:1::]/',
  'https://[2002:5db8:d822::1]/',
  'https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/',
  'https://siit.partner.example/',
  'https://siit-upper.partner.example/',
  'https://nat64.partner.example/',
  'https://nat64-public.partner.example/',
  'https://nat64-local.partner.example/',
];

t.test(
  `${EMBEDDED.length} IPv6 forms that carry an IPv4 address are refused, with and without the development flag`,
  async (t) => {
    for (const url of EMBEDDED) {
      t.not(await refusal(url), 'accepted', url);
      t.not(await refusal(url, true), 'accepted', `${url} with --allow-http-loopback`);
    }
    t.not(
      await refusal('http://[::ffff:0:7f00:1]:8080/', true),
      'accepted',
      'translated loopback is not loopback for plain http',
    );
  },
);

t.test(
  'public addresses, and the globally reachable special-purpose blocks allowed, are accepted in any spelling',
  async (t) => {
    for (const url of [
      'https://93.184.216.34/',
      'https://[2606:2800:220:1:248:1893:25c8:1946]/',
      'https://[2606:2800:0220:0001:0248:1893:25C8:1946]/',
      'https://192.175.48.6/',
      'https://[2001:4:112::6]/',
      'https://as112.partner.example/',
    ])
      t.equal(await refusal(url), 'accepted', url);
  },
);
