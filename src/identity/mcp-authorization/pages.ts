/** The authorization server's pages: plain HTML with inline style, no outside asset, no script. */
import { MIN_PASSWORD_LENGTH } from './people.js';

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Applies to every page here: nothing loads from elsewhere, nothing frames it. */
export const PAGE_SECURITY_HEADERS = {
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
} as const;

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;background:#f4f6f8;color:#1b2733;margin:0}
main{max-width:28rem;margin:4rem auto;background:#fff;border-radius:8px;padding:2rem;box-shadow:0 1px 4px #0002}
h1{font-size:1.35rem;margin-top:0}label{display:block;margin:.8rem 0 .2rem;font-weight:600}
input{width:100%;box-sizing:border-box;padding:.55rem;border:1px solid #9aa7b4;border-radius:4px;font:inherit}
button{margin-top:1.2rem;padding:.6rem 1.2rem;border:0;border-radius:4px;font:inherit;cursor:pointer;background:#1f6feb;color:#fff}
button.secondary{background:#e4e8ec;color:#1b2733;margin-left:.5rem}.error{color:#b42318;font-weight:600}
ul{padding-left:1.2rem}.muted{color:#56636f;font-size:.9rem}`;

export function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body><main>${body}</main></body></html>`;
}

export function loginPage(action: string, clientName: string, error?: string): string {
  return page(
    'Sign in',
    `<h1>Sign in to connect ${escapeHtml(clientName)}</h1>
<p class="muted">${escapeHtml(clientName)} asks to read de-identified figures of your agency and to propose work for a person to approve.</p>
${error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : ''}
<form method="post" action="${escapeHtml(action)}">
<label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username" required autofocus>
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button></form>`,
  );
}

/** The first sign-in: the password an administrator handed over is confirmed once more and replaced. */
export function passwordChangePage(action: string, clientName: string, email: string, error?: string): string {
  return page(
    'Choose your password',
    `<h1>Choose your own password</h1>
<p class="muted">The password you signed in with was handed to you by an administrator. Choose your own before ${escapeHtml(clientName)} connects; the one you were given stops working.</p>
${error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : ''}
<form method="post" action="${escapeHtml(action)}">
<label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username" value="${escapeHtml(email)}" required readonly>
<label for="password">Password you were given</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<label for="new_password">New password (at least ${MIN_PASSWORD_LENGTH} characters)</label><input id="new_password" name="new_password" type="password" autocomplete="new-password" minlength="${MIN_PASSWORD_LENGTH}" required autofocus>
<label for="confirm_password">New password again</label><input id="confirm_password" name="confirm_password" type="password" autocomplete="new-password" minlength="${MIN_PASSWORD_LENGTH}" required>
<button type="submit">Save and continue</button></form>`,
  );
}

const SCOPE_MEANINGS: Record<string, string> = {
  'mcp:tools': 'use the read-only tools and propose changes for a person to approve',
  'platform:read':
    'read agency-level figures (census, referrals, visits, orders, quality, remittances, governed queries)',
  no_phi: 'see de-identified data only: never names, phones, record numbers, birth dates or addresses',
  offline_access: 'stay connected when you are away (until you or an administrator disconnect it)',
};

export function consentPage(action: string, clientName: string, who: string, scopes: readonly string[]): string {
  const items = scopes
    .map((scope) => `<li><code>${escapeHtml(scope)}</code>: ${escapeHtml(SCOPE_MEANINGS[scope] ?? scope)}</li>`)
    .join('');
  return page(
    'Allow access',
    `<h1>Allow ${escapeHtml(clientName)}?</h1>
<p>Signed in as ${escapeHtml(who)}. ${escapeHtml(clientName)} will be able to:</p><ul>${items}</ul>
<p class="muted">It cannot change anything by itself: what it proposes waits for a person's decision.</p>
<form method="post" action="${escapeHtml(action)}">
<button type="submit" name="decision" value="allow">Allow</button><button class="secondary" type="submit" name="decision" value="deny">Deny</button></form>`,
  );
}
