import { unescape } from 'node:querystring';

/** What stands in a log line for the value of a key-carrying query parameter. */
export const REDACTED = '[REDACTED]';

/**
 * Whether a raw query parameter name (as it is in the URL) names the API key. The name is
 * decoded the way Express reads the query (`node:querystring`: `+` is a space, then percent
 * escapes, malformed ones kept), so `API%5FKEY`, which the guard accepts as `API_KEY`, counts.
 * Deliberately wider than what `extractApiKey` accepts: any case, and separators or suffixes
 * (`api-key`, `API KEY`, `API_KEY[]`, `API_KEY%00`) ignored, so a key sent in a near-miss form
 * is still never logged or cached. No route reads a parameter with such a name.
 */
export function isApiKeyParameter(rawName: string): boolean {
  const decoded = unescape(rawName.replace(/\+/g, ' '));
  return decoded.replace(/[^A-Za-z0-9]/g, '').toUpperCase() === 'APIKEY';
}

/** The raw `name=value` pieces of a URL's query string, or undefined when it has none. */
function queryParts(url: string): { path: string; parts: string[] } | undefined {
  const start = url.indexOf('?');
  if (start === -1) return undefined;
  return { path: url.slice(0, start + 1), parts: url.slice(start + 1).split('&') };
}

const nameOf = (part: string): string => {
  const eq = part.indexOf('=');
  return eq === -1 ? part : part.slice(0, eq);
};

/** Whether a URL carries an API key in its query string, in any encoding of the name. */
export function queryCarriesApiKey(url: string): boolean {
  return queryParts(url)?.parts.some((part) => isApiKeyParameter(nameOf(part))) ?? false;
}

/** The URL with the value of every key-carrying query parameter replaced by `[REDACTED]`. */
export function redactApiKeys(url: string): string {
  const query = queryParts(url);
  if (query === undefined) return url;
  const parts = query.parts.map((part) => {
    const name = nameOf(part);
    return name.length < part.length && isApiKeyParameter(name) ? `${name}=${REDACTED}` : part;
  });
  return query.path + parts.join('&');
}

/** An absolute URL's scheme and authority (`https://host:port`), empty for a bare path. */
const ORIGIN = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i;

/**
 * Credentials a service hands out inside URLs (a DRS access URL, `/drs-bytes/<token>/<name>`):
 * the routes whose next path segment is one, and what one looks like, so that it is found
 * wherever it stands (another spelling of the route, `//drs-bytes/`, `/%64rs-bytes/`,
 * `/drs-bytes;x/`, a query parameter, a Referer). `shape` must be a global RegExp.
 */
export interface UrlTokens {
  routes: readonly string[];
  shape?: RegExp;
}

export const NO_URL_TOKENS: UrlTokens = { routes: [] };

/** One URL character, as it is or percent-encoded: a token is found however it is spelt. */
const URL_CHAR = '(?:[A-Za-z0-9_-]|%[0-9A-Fa-f]{2})';

/**
 * The shape of `<payload>.<MAC>` tokens, both base64url, the MAC an HMAC-SHA256 (43
 * characters), each character as it is or percent-encoded, and whatever follows them.
 */
export const SIGNED_TOKEN_SHAPE = new RegExp(`${URL_CHAR}{16,}(?:\\.|%2[Ee])${URL_CHAR}{43,}`, 'g');

/**
 * The URL (a path, or an absolute URL) with every credential of `tokens` replaced by
 * `[REDACTED]`: the segment after a token route (matched in any case, as Express routes it),
 * and anything of the token's shape, wherever it stands.
 */
export function redactPathTokens(url: string, tokens: UrlTokens): string {
  const shaped = tokens.shape === undefined ? url : url.replace(tokens.shape, REDACTED);
  if (tokens.routes.length === 0) return shaped;
  const origin = ORIGIN.exec(shaped)?.[0] ?? '';
  const path = shaped.slice(origin.length);
  const lower = path.toLowerCase();
  const prefix = tokens.routes.find((p) => lower.startsWith(p.toLowerCase()));
  if (prefix === undefined) return shaped;
  const rest = path.slice(prefix.length);
  const end = rest.search(/[/?#]/);
  return `${origin}${path.slice(0, prefix.length)}${REDACTED}${end === -1 ? '' : rest.slice(end)}`;
}
