// The one place that reads Azure Blob Storage error shapes (RestError: statusCode, the x-ms-error-code
// as `code`, Retry-After) and turns them into FerryError kinds. Error codes:
// https://learn.microsoft.com/en-us/rest/api/storageservices/blob-service-error-codes

import { FerryError, isFerryError } from '../../errors.js';
import { parseRetryAfter } from '../../net/failures.js';

/** Set by client.ts on the egress guard's refusals: the SDK keeps only a socket error's message and code. */
export const EGRESS_REFUSED = 'FERRY_EGRESS_REFUSED';

interface RestErrorLike {
  message: string;
  code?: string;
  statusCode?: number;
  response?: { headers: { get(name: string): string | undefined } };
}

const NOT_FOUND_CODES = new Set(['BlobNotFound', 'ContainerNotFound', 'ResourceNotFound']);
const CREDENTIAL_CODES = new Set([
  'AuthenticationFailed',
  'AuthorizationFailure',
  'InvalidAuthenticationInfo',
  'AccountIsDisabled',
  'InsufficientAccountPermissions',
]);
const THROTTLE_CODES = new Set(['ServerBusy']);
/** A container that exists (always the account's own: containers are per account), or is going away. */
const CONFLICT_CODES: Record<string, string> = {
  ContainerAlreadyExists: 'the container already exists in this storage account',
  ContainerBeingDeleted: 'a container of that name is being deleted; try again in a minute',
};
const INVALID_CODES = new Set([
  'InvalidResourceName',
  'InvalidRange',
  'InvalidUri',
  'InvalidQueryParameterValue',
  'InvalidHeaderValue',
  'OutOfRangeInput',
  'RequestBodyTooLarge',
  'InvalidBlobOrBlock',
  'InvalidBlockList',
]);

/**
 * A body that reached the service with other bytes than its Content-MD5 says: damaged on the way, so
 * sent again it may well arrive whole (docs/api.md, "Verification"). Azure answers Md5Mismatch;
 * azurite, InvalidOperation "Provided contentMD5 doesn't match.".
 */
function isDamagedBody(code: string, message: string): boolean {
  return code === 'Md5Mismatch' || (code === 'InvalidOperation' && /contentMD5 doesn't match/i.test(message));
}

/**
 * Classifies any failure of an Azure call. `what` names the object or container for the message.
 * An abort is passed through untouched when the caller's `signal` fired (their own cancellation);
 * otherwise it was the connection that ended early, which is transient.
 */
export function toFerryError(err: unknown, what: string, signal?: AbortSignal): unknown {
  if (isFerryError(err)) return err;
  const guard = ferryCause(err);
  if (guard) return guard;
  if (err instanceof Error && err.name === 'AbortError') {
    if (signal?.aborted) return err;
    return new FerryError('transient', `azureblob: ${what}: the connection ended early`, { cause: err });
  }
  if (!isRestErrorLike(err)) {
    return new FerryError('transient', `azureblob: ${what}: ${errorMessage(err)}`, { cause: err });
  }
  const status = err.statusCode;
  const code = err.code ?? '';
  // The guard's own words name the endpoint and why it may not be reached.
  if (code === EGRESS_REFUSED) return new FerryError('invalid', `azureblob: ${err.message}`, { cause: err });
  // Storage messages end with "RequestId:…\nTime:…"; the first line is the provider's own words, and
  // the status says what kind of answer it was when they do not.
  const statusText = status === undefined ? '' : ` (HTTP ${status})`;
  const message = `azureblob: ${what}: ${code ? `${code}: ` : ''}${firstLine(err.message)}${statusText}`;
  if (NOT_FOUND_CODES.has(code) || status === 404)
    return new FerryError('not_found', message, { cause: err });
  if (Object.hasOwn(CONFLICT_CODES, code)) {
    return new FerryError('conflict', `azureblob: ${what}: ${CONFLICT_CODES[code]} (${code})`, {
      cause: err,
    });
  }
  if (CREDENTIAL_CODES.has(code) || status === 401 || status === 403) {
    return new FerryError('credentials_rejected', message, { cause: err });
  }
  if (THROTTLE_CODES.has(code) || status === 429 || status === 503) {
    const retryAfter = parseRetryAfter(err.response?.headers.get('retry-after'));
    return new FerryError('throttled', message, {
      cause: err,
      ...(retryAfter === undefined ? {} : { retryAfterSeconds: retryAfter }),
    });
  }
  if (isDamagedBody(code, err.message)) return new FerryError('transient', message, { cause: err });
  if (INVALID_CODES.has(code) || status === 400 || status === 409 || status === 411 || status === 412) {
    return new FerryError('invalid', message, { cause: err });
  }
  if (status === 416) return new FerryError('invalid', message, { cause: err });
  // No status: the request never got an answer (refused, reset, timeout). 5xx: the service failed;
  // a retry is never sooner than its Retry-After (docs/api.md, "Transfers").
  const retryAfter = parseRetryAfter(err.response?.headers.get('retry-after'));
  return new FerryError('transient', message, {
    cause: err,
    ...(retryAfter === undefined ? {} : { retryAfterSeconds: retryAfter }),
  });
}

function isRestErrorLike(err: unknown): err is RestErrorLike {
  return err instanceof Error && (err.name === 'RestError' || 'statusCode' in err);
}

/** The egress guard throws a FerryError; the SDK may wrap it as the cause of its own error. */
function ferryCause(err: unknown): FerryError | undefined {
  let cur: unknown = err;
  for (let depth = 0; depth < 5 && cur instanceof Error; depth++) {
    if (isFerryError(cur)) return cur;
    cur = cur.cause;
  }
  return undefined;
}

function firstLine(message: string): string {
  const line = message.split('\n', 1)[0] ?? '';
  return line.trim() || 'request failed';
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? firstLine(err.message) : 'request failed';
}
