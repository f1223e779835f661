import t from 'tap';
import { receiverAddress, receiverUrl, ReceiverRefused, type Resolver } from '../../src/events/receiver-address.js';

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
  'localhost': ['127.0.0.1', '::1'],
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
  ['https://10.0.0.1/hook', /private/],
  ['https://10.255.255.255/', /private/],
  ['https://172.16.0.1/', /private/],
  ['https://172.31.255.254/', /private/],
  ['https://192.168.0.10/', /private/],
  ['https://127.0.0.1/', /loopback/],
  ['https://127.1.2.3/', /loopback/],
  ['https://0.0.0.0/', /private|reserved/],
  ['https://169.254.169.254/latest/meta-data/', /link-local/],
  ['https://169.254.0.1/', /link-local/],
  ['https://100.64.0.1/', /private/],
  ['https://224.0.0.1/', /multicast/],
  ['https://239.255.255.250/', /multicast/],
  ['https://255.255.255.255/', /reserved/],
  ['https://198.18.0.1/', /reserved/],
  ['https://[::1]/', /loopback/],
  ['https://[::]/', /reserved/],
  ['https://[::ffff:127.0.0.1]/', /loopback/],
  ['https://[::ffff:7f00:1]/', /loopback/],
  ['https://[::ffff:10.0.0.1]/', /private/],
  ['https://[::ffff:a9fe:a9fe]/', /link-local/],
  ['https://[::127.0.0.1]/', /reserved/],
  ['https://[64:ff9b::a00:1]/', /reserved/],
  ['https://[2002:7f00:1::]/', /reserved/],
  ['https://[fd00:ec2::254]/', /private/],
  ['https://[fc00::1]/', /private/],
  ['https://[fe80::1]/', /link-local/],
  ['https://[ff02::1]/', /multicast/],
  ['https://2130706433/', /loopback/],
  ['https://0x7f000001/', /loopback/],
  ['https://0177.0.0.1/', /loopback/],
  ['https://017700000001/', /loopback/],
  ['https://127.1/', /loopback/],
  ['https://3232235777/', /private/],
  ['https://0xa9.0xfe.0xa9.0xfe/', /link-local/],
  ['https://intranet.partner.example/', /resolves to 10\.1\.2\.3/],
  ['https://metadata.partner.example/', /resolves to 169\.254\.169\.254/],
  ['https://rebind.partner.example/', /resolves to 127\.0\.0\.1/],
  ['https://v6-private.partner.example/', /resolves to fd12/],
  ['https://mapped.partner.example/', /resolves to ::ffff:192\.168\.1\.1/],
  ['https://carrier.partner.example/', /resolves to 100\.64/],
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
  t.same(await receiverAddress(new URL('https://hooks.partner.example/'), false, stub), { address: '93.184.215.14', family: 4 });
});

t.test('the development flag allows loopback only, and plain http only to loopback', async (t) => {
  t.equal(await refusal('http://127.0.0.1:8080/hook', true), 'accepted');
  t.equal(await refusal('http://[::1]:8080/hook', true), 'accepted');
  t.equal(await refusal('http://localhost:8080/hook', true), 'accepted');
  t.equal(await refusal('https://127.0.0.1/hook', true), 'accepted');
  t.match(await refusal('http://hooks.partner.example/', true), /only to a loopback address/);
  t.match(await refusal('http://10.0.0.1/', true), /private/, 'private ranges stay refused');
  t.match(await refusal('https://169.254.169.254/', true), /link-local/);
  t.match(await refusal('http://rebind.partner.example/', true), /only to a loopback address/);
});
