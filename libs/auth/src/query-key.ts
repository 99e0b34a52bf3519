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
 * The URL (a path, or an absolute URL) with the segment after any of `prefixes` replaced by
 * `[REDACTED]`: for routes whose path carries a bearer token (a DRS access URL,
 * `/drs-bytes/<token>/<name>`). A prefix is matched in any case, as Express routes it.
 */
export function redactPathTokens(url: string, prefixes: readonly string[]): string {
  if (prefixes.length === 0) return url;
  const origin = ORIGIN.exec(url)?.[0] ?? '';
  const path = url.slice(origin.length);
  const lower = path.toLowerCase();
  const prefix = prefixes.find((p) => lower.startsWith(p.toLowerCase()));
  if (prefix === undefined) return url;
  const rest = path.slice(prefix.length);
  const end = rest.search(/[/?#]/);
  return `${origin}${path.slice(0, prefix.length)}${REDACTED}${end === -1 ? '' : rest.slice(end)}`;
}
