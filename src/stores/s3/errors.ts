// The one place that reads S3 error shapes (the AWS SDK's service exceptions, HTTP statuses, and raw
// network errors) and turns them into FerryError kinds. Codes from the S3 error-code table
// (docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html) plus the extra ones Wasabi, R2 and
// B2 document. The provider's own message is kept; no secret is ever part of one.
import { type ErrorKind, FerryError, isFerryError } from '../../errors.js';
import { parseRetryAfter } from '../../net/failures.js';

const NOT_FOUND = new Set(['NoSuchKey', 'NoSuchBucket', 'NotFound', 'NoSuchUpload', 'DBEntityNotfound']);

const CREDENTIALS = new Set([
  'InvalidAccessKeyId',
  'SignatureDoesNotMatch',
  'InvalidToken',
  'ExpiredToken',
  'TokenRefreshRequired',
  'AccountProblem',
  'AccountNotActivated',
  'InvalidSecurity',
  'NotSignedUp',
  'Unauthorized',
  'AuthenticationLockout',
]);

/** Permission answers about one bucket or object: the key itself is fine, so the location stays active. */
const FORBIDDEN = new Set(['AccessDenied', 'AccessForbidden', 'AllAccessDisabled', 'Forbidden']);

const THROTTLED = new Set([
  'SlowDown',
  'Throttling',
  'ThrottlingException',
  'RequestLimitExceeded',
  'RequestRateLimitExceeded',
  'TooManyRequests',
  'TooManyRequestsException',
  'RequestThrottled',
  'ServiceUnavailable',
  'Unavailable',
]);

const TRANSIENT = new Set([
  'InternalError',
  'RequestTimeout',
  'BadDigest',
  'IncompleteBody',
  'OperationAborted',
]);

const UNSUPPORTED = new Set(['NotImplemented', 'XNotImplemented']);

/** CreateBucket's answers for a name in use, and whose the bucket is (CreateBucket, "Errors"). */
const EXISTS: Record<string, string> = {
  BucketAlreadyOwnedByYou: 'the bucket already exists and is yours',
  BucketAlreadyExists:
    'the name is taken by a bucket of another account (bucket names are shared by every account)',
};

interface SdkErrorShape {
  name?: string;
  Code?: string;
  code?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
  $response?: { statusCode?: number; headers?: Record<string, string | undefined> };
}

function statusOf(err: SdkErrorShape): number | undefined {
  return err.$metadata?.httpStatusCode ?? err.$response?.statusCode;
}

/** The HTTP status of a failed call; undefined when the request got no answer. */
export function statusOfError(err: unknown): number | undefined {
  return typeof err === 'object' && err !== null ? statusOf(err as SdkErrorShape) : undefined;
}

/** The S3 error code; HEAD answers carry none, so the SDK names them after the status ("NotFound", "403"). */
function codeOf(err: SdkErrorShape): string {
  return err.Code ?? err.name ?? err.code ?? 'Error';
}

/** True for a 412: a conditional request (ferry pins copies to an ETag) found the object changed. */
export function isPreconditionFailed(err: unknown): boolean {
  const e = err as SdkErrorShape;
  return statusOf(e) === 412 || codeOf(e) === 'PreconditionFailed';
}

/** True when the provider no longer knows a multipart upload (completed, aborted, or expired). */
export function isNoSuchUpload(err: unknown): boolean {
  return codeOf(err as SdkErrorShape) === 'NoSuchUpload';
}

/** True when a HEAD answer hid the real error code (it has no body), so a GET is needed to learn it. */
export function isBodilessAuthError(err: unknown): boolean {
  const e = err as SdkErrorShape;
  const status = statusOf(e);
  const code = codeOf(e);
  return (
    (status === 403 || status === 400 || status === 401) &&
    (/^\d+$/.test(code) ||
      code === 'Forbidden' ||
      code === 'BadRequest' ||
      code === 'Unauthorized' ||
      code === 'UnknownError' ||
      code === 'Unknown')
  );
}

function kindOf(code: string, status: number | undefined): ErrorKind {
  if (NOT_FOUND.has(code)) return 'not_found';
  if (Object.hasOwn(EXISTS, code)) return 'conflict';
  if (THROTTLED.has(code)) return 'throttled';
  if (CREDENTIALS.has(code)) return 'credentials_rejected';
  if (FORBIDDEN.has(code)) return 'forbidden';
  if (UNSUPPORTED.has(code)) return 'unsupported';
  if (TRANSIENT.has(code)) return 'transient';
  if (status === undefined) return 'transient';
  if (status === 404) return 'not_found';
  if (status === 429 || status === 503) return 'throttled';
  if (status === 401) return 'credentials_rejected';
  if (status === 403) return 'forbidden';
  if (status === 501) return 'unsupported';
  if (status >= 500 || status === 408) return 'transient';
  return 'invalid';
}

/**
 * A FerryError for any failure of an S3 call. `what` says what ferry was doing ("stat bucket/key"),
 * and leads the message. FerryErrors (the egress guard's, ferry's own checks) pass through unchanged.
 */
export function s3Error(err: unknown, what: string): FerryError {
  if (isFerryError(err)) return err;
  if (!(err instanceof Error) && (typeof err !== 'object' || err === null)) {
    return new FerryError('internal', `${what}: ${String(err)}`);
  }
  const e = err as SdkErrorShape & Error;
  if (e.name === 'AbortError') return new FerryError('transient', `${what}: aborted`, { cause: err });
  const status = statusOf(e);
  if (
    status === undefined &&
    (err instanceof TypeError || err instanceof RangeError || err instanceof ReferenceError)
  ) {
    // A bug, not a provider answer.
    return new FerryError('internal', `${what}: ${e.message}`, { cause: err });
  }
  const code = codeOf(e);
  const kind = kindOf(code, status);
  // An answer the SDK could not read as an S3 error (a proxy's or gateway's own page) gets its
  // parser's words and a hint for SDK users as the message: the status alone says what came back.
  const unreadable = status !== undefined && /Deserialization error/.test(e.message ?? '');
  const said = unreadable
    ? 'an answer that is not an S3 error document'
    : e.message && e.message !== code && e.message !== 'UnknownError'
      ? `${code}: ${e.message}`
      : code;
  const message = Object.hasOwn(EXISTS, code) ? `${EXISTS[code]} (${said})` : said;
  const statusText = status === undefined ? '' : ` (HTTP ${status})`;
  // Kept on every passing failure, not only a throttle: a retry is never sooner than the provider
  // asked (docs/api.md, "Transfers").
  const retryAfter =
    kind === 'throttled' || kind === 'transient'
      ? parseRetryAfter(e.$response?.headers?.['retry-after'] ?? undefined)
      : undefined;
  return new FerryError(kind, `${what}: ${message}${statusText}`, {
    cause: err,
    ...(retryAfter === undefined ? {} : { retryAfterSeconds: retryAfter }),
  });
}
