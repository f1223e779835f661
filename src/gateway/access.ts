import type { OperationDefinition } from '../generated/contract.js';
import { PlatformError } from '../shared/platform-error.js';
import type { ExtensionPolicy, Principal } from '../shared/principal.js';
import { RequestError } from '../shared/request-error.js';
import { WWW_AUTHENTICATE } from '../identity/authenticator.js';

/**
 * Scope, agency policy and PHI mode, all read from the operation's contract metadata
 * (x-svc-scope, x-svc-capability, x-svc-command, x-svc-no-phi). A token alone gives no write
 * permission: the agency's policy must list the command's capability.
 */
export function authorize(operation: OperationDefinition, principal: Principal, policy: ExtensionPolicy) {
  // The authenticator refuses a query token elsewhere before looking it up; a principal from another transport is checked here.
  if (principal.queryToken && !operation.queryTokens) {
    throw new RequestError(401, 'invalid_token', 'PLATFORM_INVALID_CREDENTIAL', `A query token runs only POST /api/v1/ext/queries/{its query}/run, not ${operation.operationId}.`, {
      headers: { 'www-authenticate': WWW_AUTHENTICATE },
    });
  }
  if (operation.scope && !principal.scopes.has(operation.scope)) {
    throw new PlatformError('PLATFORM_SCOPE_NOT_GRANTED', `This operation needs the scope ${operation.scope}, which the token does not carry.`, {
      required_scope: operation.scope,
    });
  }
  if (!policy.capabilities.has(operation.capability)) {
    const code = operation.command ? 'PLATFORM_POLICY_DENIED' : 'PLATFORM_CAPABILITY_NOT_ALLOWED';
    throw new PlatformError(code, `The agency's extension policy does not permit ${operation.capability}. An agency administrator can grant it.`, {
      capability: operation.capability,
    });
  }
  if (!policy.phiModes.has(principal.phiMode)) {
    throw new PlatformError('PLATFORM_PHI_MODE_DENIED', `The integration may no longer use the ${principal.phiMode} mode; request a new token.`, {
      phi_mode: principal.phiMode,
    });
  }
  if (principal.phiMode === 'no_phi' && operation.noPhi === 'denied') {
    throw new PlatformError('PLATFORM_PHI_MODE_DENIED', `${operation.operationId} is available in phi sessions only.`, {
      phi_mode: principal.phiMode,
      operation_id: operation.operationId,
    });
  }
}
