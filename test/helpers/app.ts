import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { t as rootTest } from 'tap';
import { buildApp } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { errorShapes, type Validator } from '../../src/generated/contract.js';
import { findOperation } from '../../src/gateway/http/operation-paths.js';
import { publishedContract } from './published-contract.js';
import { testDatabase, type Teardown } from './database.js';
import { testKeyEncryption } from './secrets.js';
import {
  bearer,
  createTestIntegration,
  issueTestToken,
  type TestIntegration,
  type TestIntegrationOptions,
} from './identity.js';
import type { PhiMode } from '../../src/shared/principal.js';
import type { Logger } from 'pino';
import type { GovernedQuery } from '../../src/resources/queries/governed-query.js';

export type Response = LightMyRequestResponse;

export interface TestApi {
  app: FastifyInstance;
  /** app.inject, then the response is checked against openapi.json; a mismatch fails the test. */
  request(options: InjectOptions): Promise<Response>;
}

const HTTP_LEVEL = new Set([405, 413, 415]);
/** Version 1 responses are checked against the published version 1 document (/platform/api/v1/openapi.json). */
const versionOne = publishedContract('1');

function validatorFor(method: string, url: string, res: Response): Validator | string {
  const op = findOperation(method, url);
  const status = res.statusCode;
  if (!op || HTTP_LEVEL.has(status))
    return status >= 400 ? errorShapes.ApiError : 'responses outside the partition are not in the contract';
  const validator =
    res.headers['svc-extension-contract-version'] === '1'
      ? versionOne(op.path, op.method, status)
      : (op.responses as Record<string, Validator>)[String(status)];
  return validator ?? `status ${status} is not documented for ${op.operationId}`;
}

function contractProblems(method: string, url: string, res: Response): string[] {
  const problems: string[] = [];
  if (!res.headers['x-request-id']) problems.push('no x-request-id header');
  const op = findOperation(method, url);
  if (op && res.statusCode < 300) {
    if (!['1', '2'].includes(String(res.headers['svc-extension-contract-version'])))
      problems.push('no svc-extension-contract-version header');
    if (op.responseContentType === 'text/plain') {
      if (!String(res.headers['content-type']).startsWith('text/plain'))
        problems.push(`content-type ${res.headers['content-type']} is not text/plain`);
      return problems;
    }
  }
  const validator = validatorFor(method, url, res);
  if (typeof validator === 'string') {
    if (op || res.statusCode >= 400) problems.push(validator);
    return problems;
  }
  if (!validator(res.json()))
    problems.push(...(validator.errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message}`));
  return problems;
}

function assertMatchesContract(method: string, url: string, res: Response) {
  const problems = contractProblems(method, url, res);
  if (problems.length > 0) {
    throw new Error(
      `${method} ${url} -> ${res.statusCode} does not match openapi.json:\n  ${problems.join('\n  ')}\nbody: ${res.body.slice(0, 2000)}`,
    );
  }
}

/**
 * The app on this process's test database (PGlite, or PostgreSQL with TEST_DATABASE_URL); silent unless given a logger.
 * `governedQueries` replaces the deployment's registry (a test's own queries).
 */
export async function buildTestApp(
  overrides: Partial<Config> = {},
  t: Teardown = rootTest,
  logger?: Logger,
  governedQueries?: readonly GovernedQuery<any>[],
): Promise<TestApi> {
  const database = await testDatabase();
  const config = loadConfig({});
  // Tests share a loaded machine, and PGlite runs its queries on the event loop: its delay would shed calls of tests
  // that are not about load. The shedding tests set their own thresholds.
  const pressure = { ...config.pressure, eventLoopDelayMs: 0 };
  // Background workers run only where a test starts them: each would poll the shared test database.
  const app = await buildApp({
    config: { ...config, pressure, inProcessWorkers: [], ...overrides },
    database,
    logger,
    keyEncryption: testKeyEncryption,
    governedQueries,
  });
  t.teardown(() => app.close());
  return {
    app,
    async request(options) {
      const res = await app.inject(options);
      assertMatchesContract(options.method ?? 'GET', String(options.url ?? options.path), res);
      return res;
    },
  };
}

export interface SignedInApi extends TestApi {
  integration: TestIntegration;
  token: string;
}

/**
 * The app with a fresh agency and integration (every capability, both PHI modes unless narrowed)
 * whose requests carry its bearer token unless they set their own Authorization header.
 */
export async function buildSignedInApp(
  options: { phiMode?: PhiMode; integration?: TestIntegrationOptions; config?: Partial<Config> } = {},
): Promise<SignedInApi> {
  const api = await buildTestApp(options.config);
  return signIn(api, options);
}

export async function signIn(
  api: TestApi,
  options: { phiMode?: PhiMode; integration?: TestIntegrationOptions } = {},
): Promise<SignedInApi> {
  const integration = await createTestIntegration((await testDatabase()).db, options.integration);
  const token = await issueTestToken(api, integration, options.phiMode ?? 'phi');
  return {
    ...api,
    integration,
    token,
    request: (request) => api.request({ ...request, headers: { ...bearer(token), ...request.headers } }),
  };
}
