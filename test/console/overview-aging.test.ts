import { t } from 'tap';
import { openHeadlessChromium } from '../helpers/chromium.js';
import { seededAgency } from '../helpers/clinical.js';
import {
  accessibilityViolations,
  consolePerson,
  httpSession,
  pageText,
  shot,
  signInAs,
  startConsoleServer,
  inBrowser,
} from '../helpers/console.js';

t.setTimeout(240_000);
const server = await startConsoleServer(t);
const { agencyId, noPhi } = await seededAgency(server);
const staff = await consolePerson(server.db, agencyId, 'staff');

const LABELS = {
  not_sent: 'Not sent yet',
  '0_7_days': '0 to 7 days',
  '8_14_days': '8 to 14 days',
  '15_30_days': '15 to 30 days',
  '31_plus_days': '31 days or more',
  sla_breached: 'Past the signature SLA',
};

t.test('the aging picture shows the figures of the physician order list’s summary', async (t) => {
  const list = await noPhi.request({ method: 'GET', url: '/api/v1/ext/physician-orders?limit=1' });
  t.equal(list.statusCode, 200);
  const summary = list.json().meta.summary as Record<keyof typeof LABELS, number>;
  t.ok(
    Object.values(summary).some((count) => count > 0),
    'the demo agency has orders awaiting signature',
  );
  const page = await (await httpSession(server, staff)).get('/console/');
  t.equal(page.statusCode, 200);
  const table = page.body.slice(page.body.indexOf('<caption>Orders awaiting signature by days outstanding'));
  const shown = Object.fromEntries(
    [...table.matchAll(/<tr><td>([^<]+)<\/td><td class="number">(\d+)<\/td><\/tr>/g)].map(([, label, n]) => [
      label,
      Number(n),
    ]),
  );
  t.same(
    shown,
    Object.fromEntries(Object.entries(LABELS).map(([key, label]) => [label, summary[key as keyof typeof LABELS]])),
  );
  t.match(page.body, /<svg aria-hidden="true"/, 'drawn on the page');
});

t.test('in a browser: the overview with its picture is axe clean', inBrowser, async (t) => {
  const page = await openHeadlessChromium(t);
  await signInAs(page, server.base, staff);
  t.match(await pageText(page), /Orders awaiting signature/);
  t.same(await accessibilityViolations(page), [], 'overview: no serious or critical axe violation');
  await shot(page, 'overview-aging');
});
