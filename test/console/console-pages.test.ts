/** The console's pure parts, with worked examples: who may do what, the escaping template, the bar chart. */
import { t } from 'tap';
import { barChart } from '../../src/console/charts.js';
import { mayIn } from '../../src/console/console-roles.js';
import { html } from '../../src/console/html.js';

t.test('roles: administrators administer, managers and administrators decide, everyone reads', async (t) => {
  const table = {
    administrator: { administer: true, decide: true, read: true },
    manager: { administer: false, decide: true, read: true },
    clinician: { administer: false, decide: false, read: true },
    staff: { administer: false, decide: false, read: true },
  } as const;
  for (const [role, expected] of Object.entries(table))
    for (const [capability, allowed] of Object.entries(expected))
      t.equal(mayIn(role as keyof typeof table, capability as 'read'), allowed, `${role} ${capability}`);
});

t.test('html escapes every value, keeps html built by itself, and joins lists', async (t) => {
  const name = `<script>alert("x")</script> & 'y'`;
  const escaped = '&#60;script&#62;alert(&#34;x&#34;)&#60;/script&#62; &#38; &#39;y&#39;';
  t.equal(html`<p title="${name}">${name}</p>`.text, `<p title="${escaped}">${escaped}</p>`);
  t.equal(html`<ul>${['a<', 'b'].map((x) => html`<li>${x}</li>`)}</ul>`.text, '<ul><li>a&#60;</li><li>b</li></ul>');
  t.equal(html`${null}${undefined}${false}${0}`.text, '0', 'nothing for absent values, numbers as text');
});

t.test('a bar chart scales bars to the largest value and carries its figures in a table', async (t) => {
  const chart = barChart(
    'Requests per day',
    [
      { label: '2026-11-27', value: 40 },
      { label: '2026-11-28', value: 10, bad: true },
    ],
    'requests',
  ).text;
  t.match(chart, /<rect class="bar" x="170" y="6" width="420" height="22">/, 'the largest bar is the full width');
  t.match(chart, /<rect class="bar bad" x="170" y="34" width="105" height="22">/, 'a quarter of it is a quarter');
  t.match(chart, /<svg aria-hidden="true"/, 'the picture is hidden from screen readers');
  t.match(chart, /<tr><td>2026-11-28<\/td><td class="number">10<\/td><\/tr>/, 'which read the table');
  t.match(barChart('Nothing yet', [], 'requests').text, /<tbody><\/tbody>/, 'an empty chart draws no bar');
});
