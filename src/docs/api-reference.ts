import { createHash } from 'node:crypto';
import scalar from '@scalar/fastify-api-reference';
import type { FastifyInstance } from 'fastify';
import { readProjectFile } from '../project-files.js';

const prefix = '/platform/api';
const documentUrl = `${prefix}/openapi.json`;

/** True when an If-None-Match header matches the ETag (weak comparison, RFC 9110 13.1.2). */
function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch.split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || t.replace(/^W\//, '') === etag;
  });
}

/** The contract as published (clients are generated from it) and a reference page that needs no internet access. */
export async function registerApiReference(app: FastifyInstance): Promise<void> {
  const document = Buffer.from(readProjectFile('openapi.json'), 'utf8');
  const etag = `"${createHash('sha256').update(document).digest('base64url')}"`;

  app.get(documentUrl, async (request, reply) => {
    reply.header('etag', etag).header('cache-control', 'public, max-age=300');
    if (matches(request.headers['if-none-match'], etag)) return reply.code(304).send();
    return reply.type('application/json; charset=utf-8').send(document);
  });

  await app.register(scalar, {
    routePrefix: prefix,
    configuration: {
      pageTitle: 'Extension API reference',
      // A url (not content) keeps the plugin from adding its own openapi.json/yaml routes.
      url: documentUrl,
      // Absolute, so the page works wherever it is mounted; the plugin serves the bundle here.
      cdn: `${prefix}/js/scalar.js`,
      documentDownloadType: 'json',
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
