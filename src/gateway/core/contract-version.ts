import { contractVersions } from '../../generated/contract.js';
import { RequestError } from '../../shared/request-error.js';
import type { ContractVersion } from '../../shared/versioning.js';
import type { OperationCall, ResponseHead } from './operation-call.js';

const byVersion = new Map<string, (typeof contractVersions)[number]>(contractVersions.map((v) => [v.version, v]));
const current = contractVersions.find((v) => v.status === 'current')!;
const supported = contractVersions.map((v) => v.version).join(', ');

/** RFC 9745: `@` followed by the deprecation instant in Unix seconds. */
export function deprecationHeader(since: string): string {
  return `@${Math.floor(Date.parse(since) / 1000)}`;
}

/**
 * Picks the contract version of a request (`svc-contract-version`): absent means current; deprecated versions
 * still work and say so; anything else is refused.
 */
export function negotiateVersion(
  call: Pick<OperationCall, 'headers' | 'deprecations'>,
  response: ResponseHead,
): ContractVersion {
  const asked = call.headers['svc-contract-version'];
  const version = asked === undefined ? current : byVersion.get(String(asked));
  if (!version) {
    throw new RequestError(
      400,
      'unsupported_contract_version',
      'PLATFORM_INVALID_REQUEST',
      `svc-contract-version "${String(asked)}" is not supported. Supported versions: ${supported} (${current.version} is current).`,
      {
        issues: [
          { location: 'header', path: 'svc-contract-version', message: `must be one of ${supported}`, keyword: 'enum' },
        ],
        nextStep: `Send svc-contract-version ${current.version}, or omit it to use the current version.`,
      },
    );
  }
  response.header('svc-extension-contract-version', version.version);
  if (version.status === 'deprecated' && version.deprecated_at && version.successor) {
    response.header('deprecation', deprecationHeader(version.deprecated_at));
    response.header(
      'link',
      `</platform/api/openapi.json>; rel="successor-version"; title="contract version ${version.successor}"`,
    );
    call.deprecations.push({
      kind: 'contract_version',
      name: version.version,
      since: version.deprecated_at,
      successor: version.successor,
      sunset: null,
      message: `Contract version ${version.version} is deprecated; send svc-contract-version ${version.successor}.`,
    });
  }
  return version.version;
}
