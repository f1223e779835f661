import { createHash } from 'node:crypto';
import swagger from '@fastify/swagger';
import scalar from '@scalar/fastify-api-reference';
import type { FastifyInstance } from 'fastify';
import { readProjectFile } from '../project-files.js';
import { contractChangelog } from './changelog.js';
import { contractVersionsOf, currentDocument, versionDocument, withServer } from './contract-documents.js';

const prefix = '/platform/api';

type Document = Record<string, any>;

interface PublishedDocument {
  /** Path segment under /platform/api ('' for the current document). */
  segment: string;
  /** What the reference page's version switch shows. */
  title: string;
  document: Document;
}

/** The current document (the current version's) and one document per contract version, each naming this deployment. */
export function publishedDocuments(source: Document, baseUrl: string): PublishedDocument[] {
  const versions = contractVersionsOf(source).map((entry) => ({
    segment: `/v${entry.version}`,
    title: `Version ${entry.version} (${entry.manifest_version}, ${entry.status})`,
    document: withServer(versionDocument(source, entry.version), baseUrl),
  }));
  return [{ segment: '', title: 'Current', document: withServer(currentDocument(source), baseUrl) }, ...versions];
}

/**
 * What the page's Test Request calls: the origin the page was opened from. The published documents name the public
 * base URL (generators need an absolute one), which is another origin when the page is opened under another name of
 * the same server (127.0.0.1 beside localhost): every call would then be cross-origin. Relative URLs, which Scalar
 * resolves against the page's origin, keep every call same-origin, so the API needs no CORS for the page.
 */
function sameOriginTargets(source: Document) {
  // The token URLs as openapi.json writes them, relative (the published documents make them absolute).
  const securitySchemes = Object.fromEntries(
    Object.entries<Document>(source.components.securitySchemes)
      .filter(([, scheme]) => scheme.flows)
      .map(([name, scheme]) => [
        name,
        {
          flows: Object.fromEntries(
            Object.entries<Document>(scheme.flows).map(([flow, { tokenUrl }]) => [flow, { tokenUrl }]),
          ),
        },
      ]),
  );
  return {
    servers: [{ url: '/', description: 'This server, at the address this page was opened from.' }],
    securitySchemes,
  };
}

/** The version's name in the page's addresses (#v2/tag/...). */
const slugOf = (published: PublishedDocument) => published.segment.slice(1);

/** The anchors of the models some version lacks (Scalar's model/<name in lower case>), by version slug. */
function missingModelAnchors(versions: PublishedDocument[]): Record<string, string[]> {
  const models = versions.map((d) => ({ slug: slugOf(d), names: new Set(Object.keys(d.document.components.schemas)) }));
  const every = new Set(models.flatMap((m) => [...m.names]));
  return Object.fromEntries(
    models.map(({ slug, names }) => [
      slug,
      [...every].filter((name) => !names.has(name)).map((name) => `model/${name.toLowerCase()}`),
    ]),
  );
}

/**
 * The version menu keeps the reader on what they were reading. Scalar's menu opens the other version at its top; the
 * anchor read before the switch (the address after the version's slug, e.g. tag/patients/GET/api/v1/ext/patients) is
 * reopened in the version chosen, unless that version lacks it (a model only version 2 has): every version has the
 * same tags and operations, derived from one document. Browser code, kept as source: the page writes
 * function-valued options as their source text (Function.prototype.toString), and this app is compiled without the DOM.
 */
function keepAnchorAcrossVersions(versions: PublishedDocument[]) {
  return {
    onDocumentSelect: new Function('document.documentElement.dataset.reading = location.hash;') as () => void,
    onLoaded: new Function(
      'slug',
      `
      const missing = ${JSON.stringify(missingModelAnchors(versions))};
      const reading = /^#[^/]+\\/(.+)/.exec(document.documentElement.dataset.reading ?? '')?.[1];
      if (!reading || (missing[slug] ?? []).includes(reading)) return;
      if (location.hash !== '#' + slug + '/' + reading) location.hash = slug + '/' + reading;
    `,
    ) as (slug: string) => void,
  };
}

/** True when an If-None-Match header matches the ETag (weak comparison, RFC 9110 13.1.2). */
function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch.split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || t.replace(/^W\//, '') === etag;
  });
}

const etagOf = (bytes: Buffer) => `"${createHash('sha256').update(bytes).digest('base64url')}"`;

/**
 * Each published document is held by its own @fastify/swagger instance (static mode, in its own encapsulated
 * context) and served as JSON and YAML with a strong ETag; the reference page reads them and switches versions.
 */
async function registerDocument(app: FastifyInstance, published: PublishedDocument): Promise<void> {
  await app.register(async (context) => {
    await context.register(swagger, { mode: 'static', specification: { document: published.document as never } });
    const forms = [
      {
        extension: 'json',
        type: 'application/json; charset=utf-8',
        bytes: Buffer.from(JSON.stringify(context.swagger()), 'utf8'),
      },
      {
        extension: 'yaml',
        type: 'application/yaml; charset=utf-8',
        bytes: Buffer.from(context.swagger({ yaml: true }), 'utf8'),
      },
    ];
    for (const form of forms) {
      const etag = etagOf(form.bytes);
      context.get(`${prefix}${published.segment}/openapi.${form.extension}`, async (request, reply) => {
        reply.header('etag', etag).header('cache-control', 'public, max-age=300');
        if (matches(request.headers['if-none-match'], etag)) return reply.code(304).send();
        return reply.type(form.type).send(form.bytes);
      });
    }
  });
}

/** The contract as published (clients are generated from it) and a reference page that needs no internet access. */
export async function registerApiReference(app: FastifyInstance, publicBaseUrl: string): Promise<void> {
  const source = JSON.parse(readProjectFile('openapi.json'));
  const documents = publishedDocuments(source, publicBaseUrl);
  for (const published of documents) await registerDocument(app, published);
  const changelog = Buffer.from(contractChangelog(source), 'utf8');
  app.get(`${prefix}/changelog.md`, async (_request, reply) =>
    reply.type('text/markdown; charset=utf-8').header('cache-control', 'public, max-age=300').send(changelog),
  );
  const current = contractVersionsOf(documents[0].document).find((v) => v.status === 'current');
  const { servers, securitySchemes } = sameOriginTargets(source);
  const versions = documents.filter((d) => d.segment !== '');

  await app.register(scalar, {
    routePrefix: prefix,
    configuration: {
      pageTitle: 'Extension API reference',
      // Sources (urls, not content) keep the plugin from adding its own openapi.json/yaml routes; the page's
      // switch lists each contract version, the current one first.
      sources: versions
        .toSorted(
          (a, b) => Number(b.segment === `/v${current?.version}`) - Number(a.segment === `/v${current?.version}`),
        )
        .map((d, i) => ({
          title: d.title,
          slug: slugOf(d),
          url: `${prefix}${d.segment}/openapi.json`,
          default: i === 0,
        })),
      // Absolute, so the page works wherever it is mounted; the plugin serves the bundle here.
      cdn: `${prefix}/js/scalar.js`,
      documentDownloadType: 'both',
      // Test Request opens on the client-credentials flow: the reader types a client id and secret and the page
      // fetches the token (with phi_mode from the scheme's x-scalar-security-body), instead of pasting one.
      authentication: { preferredSecurityScheme: 'oauth2', securitySchemes },
      servers,
      ...keepAnchorAcrossVersions(versions),
      // Each of these would otherwise reach scalar.com services or a font CDN from the browser.
      withDefaultFonts: false,
      telemetry: false,
      agent: { disabled: true },
      mcp: { disabled: true },
      showDeveloperTools: 'never',
      hideClientButton: true, // "Open in API Client" links to client.scalar.com
    },
  });
}
