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
