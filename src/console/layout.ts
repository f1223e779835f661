import type { Person } from '../identity/mcp-authorization/people.js';
import { mayIn, type ConsoleCapability } from './console-roles.js';
import { html, type Html } from './html.js';

export const CONSOLE_PATH = '/console';
/** The stylesheet's address carries its version, so that it may be cached for long. */
export const STYLESHEET_PATH = `${CONSOLE_PATH}/assets/console-1.css`;

/** A section of the console in its navigation: who may open it is the capability it needs. */
export interface NavEntry {
  path: string;
  label: string;
  capability: ConsoleCapability;
}

/** What a signed-in page knows of who is looking at it. */
export interface Viewer {
  person: Person;
  /** The form token every change must send back (field `_csrf`). */
  csrfToken: string;
  nav: readonly NavEntry[];
  /** The path of the page, to mark it in the navigation. */
  path: string;
}

/** A hidden field with the viewer's form token: every form that changes something carries it. */
export const csrfField = (viewer: Viewer) => html`<input type="hidden" name="_csrf" value="${viewer.csrfToken}">`;

/** A notice at the top of a page: what a change did, or why it was refused (role alert, so screen readers say it). */
export interface Notice {
  kind: 'done' | 'refused';
  text: string;
}

function head(title: string): Html {
  return html`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${title} · Agency console</title><link rel="stylesheet" href="${STYLESHEET_PATH}"></head>`;
}

export function noticeBlock(notice: Notice | undefined): Html {
  if (!notice) return html``;
  return html`<p class="notice ${notice.kind}" role="${notice.kind === 'refused' ? 'alert' : 'status'}">${notice.text}</p>`;
}

/** The entry of the page itself, or of the section a page under it belongs to (the overview is only itself). */
function current(entry: NavEntry, path: string): Html {
  if (entry.path === path) return html` aria-current="page"`;
  if (entry.path !== `${CONSOLE_PATH}/` && path.startsWith(`${entry.path}/`)) return html` aria-current="location"`;
  return html``;
}

function navigation(viewer: Viewer): Html {
  const entries = viewer.nav.filter((entry) => mayIn(viewer.person.role, entry.capability));
  return html`<nav aria-label="Console"><ul>${entries.map(
    (entry) => html`<li><a href="${entry.path}"${current(entry, viewer.path)}>${entry.label}</a></li>`,
  )}</ul></nav>`;
}

/** A page of a signed-in person: the agency, the navigation their role allows, who they are, and sign out. */
export function consolePage(viewer: Viewer, title: string, body: Html, notice?: Notice): string {
  const { person } = viewer;
  return html`${head(title)}<body><a class="skip" href="#main">Skip to content</a>
<header><p class="agency">${viewer.person.agencyName}</p>${navigation(viewer)}
<form method="post" action="${CONSOLE_PATH}/sign-out" class="who">${csrfField(viewer)}<span>${person.name} · ${person.role}</span> <button type="submit" class="secondary">Sign out</button></form></header>
<main id="main" tabindex="-1"><h1>${title}</h1>${noticeBlock(notice)}${body}</main></body></html>`.text;
}

/** A page of no one signed in (sign-in, the first password change, a page gone). */
export function publicPage(title: string, body: Html): string {
  return html`${head(title)}<body class="narrow"><main id="main"><h1>${title}</h1>${body}</main></body></html>`.text;
}
