import t, { type Test } from 'tap';
import { Webhook } from 'standardwebhooks';
import { webhookCommands } from '../../../src/admin/webhook.js';
import type { Options } from '../../../src/admin/command.js';
import { loadConfig } from '../../../src/config.js';
import { webhookEvents } from '../../../src/generated/contract.js';
import { verifyDelivery, type WebhookEnvelope } from '../../../src/events/verify-delivery.js';
import { buildTestApp, type SignedInApi } from '../../helpers/app.js';
import { seededAgency } from '../../helpers/clinical.js';
import { testDatabase } from '../../helpers/database.js';
import { eraText, fixtureText, importText } from '../../helpers/era-files.js';
import { listPage } from '../../helpers/list-walk.js';
import { testKeyEncryption } from '../../helpers/secrets.js';
import {
  startReceiver,
  startWebhookWorker,
  type ReceivedDelivery,
  type TestReceiver,
} from '../../helpers/webhook-receiver.js';

const { db } = await testDatabase();
const api = await buildTestApp();
const { agencyId, phi, noPhi } = await seededAgency(api);
const config = loadConfig({});

/** Subscribed without a signed BAA: remittance.received is not clinical, so nothing is held. */
async function subscribe(receiver: TestReceiver, phiMode: 'phi' | 'no_phi'): Promise<string> {
  const options: Options = {
    agency: agencyId,
    url: receiver.url,
    events: 'remittance.received',
    'allow-http-loopback': true,
    'phi-mode': phiMode,
  };
  const { json } = await webhookCommands.subscribe.run({ db, config, options, keyEncryption: () => testKeyEncryption });
  return json.signing_secret as string;
}

const remittanceEvents = async () =>
  Number(
    (
      await db
        .selectFrom('webhook_events')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('agency_id', '=', agencyId)
        .where('type', '=', 'remittance.received')
        .executeTakeFirstOrThrow()
    ).n,
  );

function verified(t: Test, delivery: ReceivedDelivery, secret: string): WebhookEnvelope {
  const envelope = verifyDelivery(delivery.rawBody, delivery.headers, secret);
  const headers = Object.fromEntries(Object.entries(delivery.headers).map(([k, v]) => [k, String(v)]));
  t.same(
    new Webhook(secret).verify(delivery.rawBody.toString('utf8'), headers),
    envelope,
    'standardwebhooks verifies it unchanged',
  );
  const { validate } = webhookEvents['remittance.received'];
  t.ok(validate(envelope), `matches RemittanceReceivedEvent in openapi.json ${JSON.stringify(validate.errors)}`);
  return envelope;
}

const byId = (data: { id: string }[]) => [...data].sort((a, b) => (a.id < b.id ? -1 : 1));
const route20 = async (session: SignedInApi, eraFileId: string) =>
  byId((await listPage(session, '/api/v1/ext/remittances', { era_file_id: eraFileId })).data);

t.test(
  'an imported 835 raises remittance.received per payment, as listRemittances shows it to each PHI mode; the same file again raises none',
  async (t) => {
    const phiReceiver = await startReceiver(t);
    const noPhiReceiver = await startReceiver(t);
    const phiSecret = await subscribe(phiReceiver, 'phi');
    const noPhiSecret = await subscribe(noPhiReceiver, 'no_phi');
    startWebhookWorker(t, db);
    const seeded = await remittanceEvents();

    const imported = await importText(
      db,
      agencyId,
      'secondary.835',
      fixtureText('secondary-payer-checks-no-breaks.835'),
    );
    t.equal(imported.payments, 2);
    t.equal(
      await remittanceEvents(),
      seeded + 2,
      "one event per payment, written by the import (the seed's own imports raised theirs)",
    );

    const phiData = (await phiReceiver.waitFor(2))
      .map((d) => verified(t, d, phiSecret))
      .map((e) => e.data as { id: string });
    const noPhiData = (await noPhiReceiver.waitFor(2))
      .map((d) => verified(t, d, noPhiSecret))
      .map((e) => e.data as { id: string });
    t.same(
      byId(phiData),
      await route20(phi, imported.eraFileId),
      'phi: exactly what listRemittances lists (check numbers masked)',
    );
    t.same(
      byId(noPhiData),
      await route20(noPhi, imported.eraFileId),
      'no_phi: exactly what listRemittances shows a no_phi session',
    );
    t.match(noPhiData[0], { payment_date: /^\d{4}-01-01$/, check_or_eft_number: null });

    const again = await importText(
      db,
      agencyId,
      'secondary-again.835',
      fixtureText('secondary-payer-checks-no-breaks.835'),
    );
    t.equal(again.outcome, 'already_imported');
    t.equal(await remittanceEvents(), seeded + 2, 'the same file again adds no event');
  },
);

t.test('a refused file raises no event, though its payment was read before the refusal', async (t) => {
  const before = await remittanceEvents();
  const wrongTrailer = eraText([{ pcn: 'EV1', paid: '100.00' }], 'EVENTTRACE1').replace(
    'IEA*1*000000077',
    'IEA*1*000000078',
  );
  await t.rejects(importText(db, agencyId, 'refused.835', wrongTrailer), {
    name: 'EraImportError',
    message: /nothing was written/,
  });
  t.equal(await remittanceEvents(), before, 'rolled back with the payment');
  t.equal(
    await db
      .selectFrom('remittances')
      .select('id')
      .where('agency_id', '=', agencyId)
      .where('trace_number', '=', 'EVENTTRACE1')
      .executeTakeFirst(),
    undefined,
  );
});
