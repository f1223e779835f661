import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import type { DB } from '../../src/db/schema.js';
import type { UserRole } from '../../src/db/tables/people.js';
import { createUser } from '../../src/admin/user.js';
import { changePassword } from '../../src/identity/mcp-authorization/people.js';
import { buildTestApp, type TestApi } from './app.js';
import { CHROMIUM, type HeadlessPage } from './chromium.js';
import type { Teardown } from './database.js';
import { testDatabase } from './database.js';
import { createTestIntegration, type TestIntegration } from './identity.js';
import { freePort } from './ports.js';

/** The service listening on loopback for a browser: its base URL (the token issuer) and the app. */
export interface ConsoleServer extends TestApi {
  base: string;
  db: Kysely<DB>;
}

export async function startConsoleServer(t: Teardown): Promise<ConsoleServer> {
  const db = (await testDatabase()).db;
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const api = await buildTestApp({ tokenIssuer: base, tokenAudience: `${base}/api/v1/ext` }, t);
  await api.app.listen({ port, host: '127.0.0.1' });
  return { ...api, base, db };
}

/** The option of a test that drives Chromium: skipped without Debian's package (.ci/run installs it). */
export const inBrowser = { skip: !existsSync(CHROMIUM) && `no ${CHROMIUM} (Debian package chromium)` };

/** What a console test starts from: the listening service, and two agencies with a person of each role. */
export async function consoleTestbed(t: Teardown) {
  const server = await startConsoleServer(t);
  return { server, db: server.db, agency: await consoleAgency(server.db), other: await consoleAgency(server.db) };
}

export interface ConsolePerson {
  userId: string;
  agencyId: string;
  email: string;
  password: string;
  role: UserRole;
}

export const PERSON_PASSWORD = 'a long console password';

/** A person of the agency who has chosen their own password already (the first sign-in's change is tested apart). */
export async function consolePerson(db: Kysely<DB>, agencyId: string, role: UserRole): Promise<ConsolePerson> {
  const email = `${role}-${Math.random().toString(36).slice(2, 10)}@console.example`;
  const user = await createUser(db, { agencyId, email, name: `${role[0].toUpperCase()}${role.slice(1)} Person`, role });
  await changePassword(db, user.userId, PERSON_PASSWORD);
  return { userId: user.userId, agencyId, email, password: PERSON_PASSWORD, role };
}

/** A fresh agency (made through a test integration, so that it has an office) with one person of each console role. */
export async function consoleAgency(db: Kysely<DB>) {
  const integration: TestIntegration = await createTestIntegration(db, { name: 'Census spreadsheet' });
  const { agencyId } = integration;
  return {
    agencyId,
    integration,
    administrator: await consolePerson(db, agencyId, 'administrator'),
    manager: await consolePerson(db, agencyId, 'manager'),
    staff: await consolePerson(db, agencyId, 'staff'),
  };
}

/** Types into the field labelled `label` (its `for`), as a person would: focus, then the text as keystrokes. */
export async function typeInto(page: HeadlessPage, label: string, text: string): Promise<void> {
  const found = await page.evaluate<boolean>(`(() => {
    const label = [...document.querySelectorAll('label')].find((l) => l.textContent.trim() === ${JSON.stringify(label)});
    const field = label && document.getElementById(label.htmlFor);
    if (!field) return false;
    field.focus();
    field.value = '';
    return true;
  })()`);
  if (!found) throw new Error(`no field labelled "${label}" on ${await page.evaluate('location.pathname')}`);
  await page.send('Input.insertText', { text });
}

/** Clicks the button named `name` (in the form around `within`, when given) and waits for the next page. */
export async function press(page: HeadlessPage, name: string, within = 'document'): Promise<void> {
  const loaded = new Promise((resolve) => page.on('Page.loadEventFired', resolve));
  const clicked = await page.evaluate<boolean>(`(() => {
    const button = [...(${within}).querySelectorAll('button')].find((b) => b.textContent.trim() === ${JSON.stringify(name)});
    if (!button) return false;
    button.click();
    return true;
  })()`);
  if (!clicked) throw new Error(`no button "${name}" on ${await page.evaluate('location.pathname')}`);
  await loaded;
}

export async function signInAs(page: HeadlessPage, base: string, person: ConsolePerson): Promise<void> {
  await page.navigate(`${base}/console/sign-in`);
  await typeInto(page, 'Email', person.email);
  await typeInto(page, 'Password', person.password);
  await press(page, 'Sign in');
}

export const pageText = (page: HeadlessPage) => page.evaluate<string>('document.body.innerText');

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core's serious and critical violations of the page as it stands (WCAG 2.1 A and AA, and best practices). */
export async function accessibilityViolations(page: HeadlessPage): Promise<string[]> {
  await page.evaluate(axeSource);
  return page.evaluate<
    string[]
  >(`axe.run(document, { runOnly: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] })
    .then((r) => r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => v.id + ': ' + v.nodes.map((n) => n.target.join(' ')).join(', ')))`);
}

const OPERABLE = 'a[href], button, input:not([type=hidden]), select, textarea, summary';

/**
 * Presses Tab once per element a person can operate, from the top, and names what each press focused by its place
 * among them ("3 input:email"): a page works with the keyboard alone when `reached` equals `inPageOrder`.
 */
export async function keyboardWalk(page: HeadlessPage): Promise<{ reached: string[]; inPageOrder: string[] }> {
  const inPageOrder = await page.evaluate<string[]>(`(() => {
    const all = [...document.querySelectorAll(${JSON.stringify(OPERABLE)})].filter((e) => !e.disabled && e.offsetParent !== null);
    all.forEach((e, i) => { e.dataset.stop = i + ' ' + e.tagName.toLowerCase() + ':' + (e.textContent.trim() || e.getAttribute('name') || e.id); });
    document.activeElement?.blur();
    window.getSelection().removeAllRanges();
    return all.map((e) => e.dataset.stop);
  })()`);
  const reached: string[] = [];
  for (let i = 0; i < inPageOrder.length; i++) {
    await page.send('Input.dispatchKeyEvent', { type: 'keyDown', key: 'Tab', code: 'Tab', windowsVirtualKeyCode: 9 });
    await page.send('Input.dispatchKeyEvent', { type: 'keyUp', key: 'Tab', code: 'Tab', windowsVirtualKeyCode: 9 });
    reached.push(await page.evaluate<string>(`document.activeElement?.dataset.stop ?? 'outside the page'`));
  }
  return { reached, inPageOrder };
}

/** With CONSOLE_SHOTS=dir, a full-page PNG of each step there (looked at when the console changes). */
export async function shot(page: HeadlessPage, name: string): Promise<void> {
  const dir = process.env.CONSOLE_SHOTS;
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  await page.screenshot(join(dir, `${name}.png`), true);
}

/** A console session over HTTP (no browser): its cookies, and a way to send forms with the page's form token. */
export interface HttpSession {
  cookie: string;
  get(path: string): Promise<import('./app.js').Response>;
  /** Posts a url-encoded form with the form token of `tokenFrom` (a page of the console, the overview by default). */
  post(
    path: string,
    fields: Record<string, string | string[]>,
    tokenFrom?: string,
  ): Promise<import('./app.js').Response>;
}

const cookiesOf = (res: import('./app.js').Response) =>
  res.cookies.filter((c) => c.value !== '').map((c) => `${c.name}=${c.value}`);

export const formToken = (page: string) => /name="_csrf" value="([^"]+)"/.exec(page)?.[1] ?? '';

export function formBody(fields: Record<string, string | string[]>): string {
  const body = new URLSearchParams();
  for (const [name, value] of Object.entries(fields)) for (const v of [value].flat()) body.append(name, v);
  return body.toString();
}

/** Signs `person` in through the sign-in form, as a browser without scripts would. */
export async function httpSession(api: TestApi, person: { email: string; password: string }): Promise<HttpSession> {
  const form = await api.app.inject({ url: '/console/sign-in' });
  const jar = new Map(cookiesOf(form).map((c) => [c.split('=')[0], c]));
  const signedIn = await api.app.inject({
    method: 'POST',
    url: '/console/sign-in',
    headers: { cookie: [...jar.values()].join('; '), 'content-type': 'application/x-www-form-urlencoded' },
    payload: formBody({ _csrf: formToken(form.body), email: person.email, password: person.password }),
  });
  if (signedIn.statusCode !== 303) throw new Error(`sign-in answered ${signedIn.statusCode}: ${signedIn.body}`);
  for (const c of cookiesOf(signedIn)) jar.set(c.split('=')[0], c);
  const cookie = [...jar.values()].join('; ');
  const get = (path: string) => api.app.inject({ url: path, headers: { cookie } });
  return {
    cookie,
    get,
    async post(path, fields, tokenFrom = '/console/') {
      const token = formToken((await get(tokenFrom)).body);
      return api.app.inject({
        method: 'POST',
        url: path,
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        payload: formBody({ _csrf: token, ...fields }),
      });
    },
  };
}
