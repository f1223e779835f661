/** A browser's part of the authorization code flow, done with fetch: cookies, redirects followed by hand, forms posted. */
export class FormBrowser {
  private readonly cookies = new Map<string, string>();
  /** Every page and redirect seen, for the PHI canary and for assertions. */
  readonly seen: { url: string; status: number; body: string; location?: string; headers: Headers }[] = [];

  /** `headers` go with every request (a proxy's X-Forwarded-For). */
  constructor(private readonly headers: Record<string, string> = {}) {}

  async open(
    url: string,
    init: RequestInit = {},
  ): Promise<{ url: string; status: number; body: string; location?: string; headers: Headers }> {
    const headers = new Headers({ ...this.headers, ...Object.fromEntries(new Headers(init.headers)) });
    if (this.cookies.size > 0)
      headers.set('cookie', [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; '));
    const res = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const cookie of res.headers.getSetCookie()) {
      const [pair] = cookie.split(';');
      const [name, ...value] = pair.split('=');
      this.cookies.set(name.trim(), value.join('='));
    }
    const location = res.headers.get('location') ?? undefined;
    const page = {
      url,
      status: res.status,
      body: await res.text(),
      location: location && new URL(location, url).href,
      headers: res.headers,
    };
    this.seen.push(page);
    return page;
  }

  /** Follows redirects until a page that is not one, or until a URL `stopAt` says to stop at (the client's redirect URI). */
  async follow(url: string, stopAt: (url: string) => boolean, init?: RequestInit) {
    let page = await this.open(url, init);
    while (page.location && !stopAt(page.location)) page = await this.open(page.location);
    return page;
  }

  post(url: string, fields: Record<string, string>, stopAt: (url: string) => boolean) {
    return this.follow(url, stopAt, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    });
  }
}

/** The action of the page's form. */
export function formAction(html: string, base: string): string {
  const match = /<form method="post" action="([^"]+)"/.exec(html);
  if (!match) throw new Error(`no form on the page: ${html.slice(0, 300)}`);
  return new URL(
    match[1].replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code))),
    base,
  ).href;
}
