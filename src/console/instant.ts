import { html, type Html } from './html.js';

/** An instant as people read it on a console page (UTC, to the minute), with its exact value for machines. */
export function instant(at: Date | null | undefined): Html {
  if (!at) return html`—`;
  const iso = at.toISOString();
  return html`<time datetime="${iso}">${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC</time>`;
}
