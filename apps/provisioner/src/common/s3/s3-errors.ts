/**
 * Node's failures of a connection or a name lookup: the endpoint cannot be reached (for now).
 * The SDK retries them, SignedPut too, and the storage calls them unavailable, not refused.
 */
export const UNREACHABLE_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** The HTTP status of an S3 SDK failure, when it got an answer. */
export function s3Status(error: unknown): number | undefined {
  return (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
}

/**
 * What an S3 failure means for its caller: `refused` when no retry can cure it (a rejected
 * credential or signature, no permission, no bucket), `unavailable` when the endpoint did not
 * answer (a time-out, a refused or reset connection, 5xx, throttling), null for anything else
 * (a request the server refuses for what it is). The one reading of S3 failures, for the
 * storage (asStorageError) and the S3 inbox source alike.
 */
export function s3FailureKind(error: unknown): 'refused' | 'unavailable' | null {
  const name = (error as { name?: string }).name ?? '';
  const code = (error as { code?: string }).code ?? '';
  const status = s3Status(error);
  if (
    status === 403 ||
    status === 401 ||
    name === 'NoSuchBucket' ||
    ['InvalidAccessKeyId', 'SignatureDoesNotMatch', 'AccessDenied'].includes(name)
  )
    return 'refused';
  if (
    name === 'TimeoutError' ||
    UNREACHABLE_CODES.has(code) ||
    (status !== undefined && status >= 500) ||
    name === 'SlowDown'
  )
    return 'unavailable';
  return null;
}

/** How a failure is named in a message: the S3 error's name, else its HTTP status. */
export function s3FailureName(error: unknown): string {
  const name = (error as { name?: string }).name;
  return name || `HTTP ${String(s3Status(error))}`;
}
