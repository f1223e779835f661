import type { SignedInApi } from './app.js';

export type Query = Record<string, string>;

/** One list page's JSON body; a failed request fails loudly with its body. */
export async function listPage(session: SignedInApi, url: string, query: Query = {}) {
  const res = await session.request({ method: 'GET', url, query });
  if (res.statusCode !== 200) throw new Error(`GET ${url} ${JSON.stringify(query)} -> ${res.statusCode}: ${res.body}`);
  return res.json();
}

/** Every id of a list, page after page, following next_offset or next_cursor; with the last page's meta. */
export async function walkList(session: SignedInApi, url: string, query: Query, by: 'offset' | 'cursor', limit = 200) {
  const ids: string[] = [];
  let next: Query = {};
  for (;;) {
    const page = await listPage(session, url, { ...query, limit: String(limit), ...next });
    ids.push(...page.data.map((item: { id: string }) => item.id));
    if (!page.meta.has_more) return { ids, last: page.meta };
    next = by === 'offset' ? { offset: String(page.meta.next_offset) } : { cursor: page.meta.next_cursor };
  }
}

/** A reduced instant of a no_phi session: January 1 of its year. */
export const YEAR_ONLY_INSTANT = /^\d{4}-01-01T00:00:00\.000Z$/;
