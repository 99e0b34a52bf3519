import type { Request } from 'express';

export const API_KEY_HEADER = 'x-api-key';
export const API_KEY_QUERY = 'API_KEY';

function nonEmpty(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

/** The API key of a request: the `X-API-Key` header wins over the older `API_KEY` query form. */
export function extractApiKey(req: Pick<Request, 'headers' | 'query'>): string | undefined {
  return nonEmpty(req.headers[API_KEY_HEADER]) ?? nonEmpty(req.query?.[API_KEY_QUERY]);
}

/** The token of an `Authorization: Bearer <token>` header, if that is the scheme used. */
export function extractBearerToken(req: Pick<Request, 'headers'>): string | undefined {
  const header = req.headers.authorization;
  const match = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match?.[1];
}
