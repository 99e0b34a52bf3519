import { Inject, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { API_KEY_HEADER, hashApiKey, queryCarriesApiKey } from '@app/auth';
import { assignRequestId, HttpMetrics, logRequestCompleted, routeTemplate } from '@app/platform';
import { viewerIdentity } from '../auth/viewer';
import { CatalogVersionTracker } from '../catalog-version/catalog-version-tracker';
import { CATALOG_SETTINGS, CatalogSettings } from '../config/catalog.settings';
import { EntityTags, type TagEntry } from './entity-tags';
import { endWithBody, matchesEtag } from './json-body';
import { CachedResponse, ResponseCache, stringBytes } from './response-cache';

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** A response the full pipeline produced, with what it takes to produce it again byte for byte. */
interface FastEntry extends CachedResponse {
  /** Name, value, name, value… as `writeHead` takes them, Content-Length included. */
  headers: string[];
  route: string;
  expiresAt?: number;
  /** Last-Modified, for If-Modified-Since (the FAIR Data Point's records carry one). */
  lastModified?: string;
}

/** An answer to another URL, built with the one being sent (the FAIR Data Point's read-ahead). */
export interface CompanionRead {
  /** Path and query as a client asks it. */
  url: string;
  /** The route template, for the metrics. */
  route: string;
  response: CachedResponse;
  /** Its own headers (lower-case names), in place of the sent answer's of the same names. */
  headers: Record<string, string>;
}

/**
 * Derives the entity tag a route's answer to `url` would carry for the caller `identity` at the
 * data `version`, with `accept`, without reading or building it (the FAIR Data Point's tags
 * depend on nothing else); undefined when the URL is not one it can say this of for certain.
 */
export type TagDeriver = (
  url: string,
  accept: string | undefined,
  version: string,
  identity: string,
) => { etag: string; route: string } | undefined;

/** Keys whose identity is kept for tag derivation (a catalog has a few hundred at most). */
const MAX_IDENTITIES = 4096;
/** The data version the version tracker vouched for when a request reached the app. */
const ARRIVED_AT = Symbol('fastReadsArrivedAt');
type Arrived = IncomingMessage & { [ARRIVED_AT]?: string | null };

/** Who asks: an `X-API-Key`, or nobody (public routes); null for any other credential. */
interface Caller {
  apiKey?: string;
  /** The key's SHA-256, once asked (a read-ahead files hundreds of URLs for one caller). */
  keyHash?: string;
}

/** "public", or the SHA-256 of the caller's key: what the index keys are made of. */
function callerName(caller: Caller): string {
  if (caller.apiKey === undefined) return 'public';
  return (caller.keyHash ??= hashApiKey(caller.apiKey));
}

function callerOf(req: IncomingMessage): Caller | null {
  const apiKey = req.headers[API_KEY_HEADER];
  if (typeof apiKey === 'string' && apiKey !== '') return { apiKey };
  // No key: only a request with no credential at all (a Bearer token changes the answer).
  if (apiKey === undefined && req.headers.authorization === undefined) return {};
  return null;
}

/**
 * Answers repeated catalog reads before Express and Nest see them. The full pipeline (routing,
 * key check, validation, the query) answers a GET first; its 200 is then indexed under the
 * data version, the SHA-256 of the caller's key and the exact URL. The same key asking the same
 * URL while the version is unchanged gets those bytes and headers again, with its own request
 * id, access-log line and metrics: that costs a hash and a map lookup instead of two database
 * round trips and the framework, which is most of the time of a small response.
 *
 * Tags outlive answers: the FAIR Data Point files its records' tags in an index of tags only
 * (`rememberTags`, entity-tags.ts), so an If-None-Match whose answer has left this index still
 * gets its 304 here, keyed and bounded the same way.
 *
 * A request without any credential is indexed the same way (public routes: only a 200 is
 * indexed, and a protected route never answers 200 without a key).
 *
 * Nothing else takes this path: other methods, keys in the query string or a Bearer token,
 * bodies, a URL not answered before, or any moment the version tracker cannot vouch for the
 * version (listener down, a write through this replica in flight or just answered). Keys,
 * users and endpoints are catalog data, so revoking a key changes the version too. An entry
 * exists only for a key that was valid at this version, so it is answered whatever address
 * sends it: the failure limiter refuses failures only, never a valid key.
 *
 * Measured gain (`npm run bench -- --only catalog`, FAST_READS on and off in one run): small
 * answers 1.5–4.5× the requests per second of the framework path (`/api/projects`, 0.05–0.21
 * MiB), multi-megabyte answers within noise (docs/decisions/read-cache.md).
 */
@Injectable()
export class FastReads {
  private readonly index: ResponseCache<FastEntry>;
  /** Tags only (no bodies), for conditional GETs of answers the index has let go. */
  private readonly tags: EntityTags;
  private metrics?: HttpMetrics;
  /** Requests the full pipeline refuses (a client with too many answers unread): not answered here. */
  private refused?: (req: IncomingMessage) => boolean;
  private readonly enabled: boolean;
  private deriver?: TagDeriver;
  /**
   * For tag derivation: the identity the full pipeline gave each key (by its SHA-256) at one
   * data version, emptied when the version moves (a key's validity is catalog data).
   */
  private identities = { version: '', byKey: new Map<string, string>() };
  /** The headers the framework's 304 of a derivable route sends besides ETag and the request id. */
  private derivedHeaders?: readonly string[];

  constructor(
    @Inject(CATALOG_SETTINGS) settings: CatalogSettings,
    private readonly tracker: CatalogVersionTracker,
  ) {
    this.enabled = settings.FAST_READS;
    // Bodies are shared with the response cache but counted here too: an entry can outlive
    // the other cache's copy, and the bound must hold either way.
    this.index = new ResponseCache<FastEntry>(
      {
        maxEntries: settings.RESPONSE_CACHE_MAX_ENTRIES,
        maxBytes: settings.RESPONSE_CACHE_MAX_BYTES,
      },
      (entry) =>
        entry.headers.reduce((sum, text) => sum + stringBytes(text), stringBytes(entry.route)),
    );
    this.tags = new EntityTags({
      maxEntries: settings.ETAG_INDEX_MAX_ENTRIES,
      maxBytes: settings.ETAG_INDEX_MAX_BYTES,
    });
  }

  /** Entries and bytes held now (for the metrics). */
  usage(): { entries: number; bytes: number } {
    return { entries: this.index.size, bytes: this.index.heldBytes };
  }

  /** What the entity-tag index holds now (for the metrics). */
  tagUsage(): { entries: number; bytes: number } {
    return this.tags.usage();
  }

  /**
   * Puts this index in front of the app's request handler and starts the version listener.
   * With FAST_READS off it only tells the version tracker about writes through this replica.
   */
  attach(server: Server, metrics: HttpMetrics, refused?: (req: IncomingMessage) => boolean): void {
    this.metrics = metrics;
    this.refused = refused;
    const handlers = server.listeners('request') as ((
      req: IncomingMessage,
      res: ServerResponse,
    ) => void)[];
    server.removeAllListeners('request');
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      if (this.tryAnswer(req, res)) return;
      for (const handler of handlers) handler(req, res);
    });
    this.tracker.start();
  }

  /** Called by the full pipeline for a response it is about to send for `version`. */
  remember(
    req: Request,
    res: Response,
    version: string,
    response: CachedResponse,
    expiresAt?: number,
  ): void {
    const caller = this.indexable(req);
    if (caller === null) return;
    this.index.set(this.keyOf(version, caller, req.originalUrl, req.headers.accept), {
      ...response,
      headers: headerList(res, {}, response.bytes),
      route: routeTemplate(req),
      expiresAt,
      lastModified: res.getHeader('last-modified') as string | undefined,
    });
  }

  /**
   * Indexes, for the caller of `req` and the same Accept, answers to other URLs that were built
   * with the one `res` sends (read ahead: the FAIR Data Point's next records of a harvester's
   * walk), each with `res`'s headers but its own where it has them.
   */
  rememberAlso(req: Request, res: Response, version: string, reads: CompanionRead[]): void {
    const caller = this.indexable(req);
    if (caller === null) return;
    // `res`'s headers read once for all of them (a read-ahead brings hundreds).
    const shared = headersSet(res, (name) => name === 'x-request-id' || name === 'content-length');
    for (const read of reads)
      this.index.set(this.keyOf(version, caller, read.url, req.headers.accept), {
        ...read.response,
        headers: withOwn(shared, read.headers, read.response.bytes),
        route: read.route,
        lastModified: read.headers['last-modified'],
      });
  }

  /**
   * Keeps, for the caller of `req` and its Accept, the entity tag of each URL read at `version`
   * (`req`'s own when `url` is absent), with the headers `res` carries that a 304 repeats: a
   * later If-None-Match naming the tag is answered 304 here even once the answer itself has
   * left the index. Only for answers that depend on nothing but the version, the caller, the
   * Accept and the URL (the FAIR Data Point's records).
   */
  rememberTags(
    req: Request,
    res: Response,
    version: string,
    tags: { url?: string; route?: string; etag: string }[],
  ): void {
    const caller = this.indexable(req);
    if (caller === null) return;
    const headers = notModifiedHeaders(res);
    for (const { url, route, etag } of tags)
      this.tags.set(
        this.keyOf(version, caller, url ?? req.originalUrl, req.headers.accept),
        etag,
        headers,
        route ?? routeTemplate(req),
      );
  }

  /**
   * Lets conditional GETs of the URLs `deriver` knows be answered here with no index entry at
   * all: the tag is derived from the version, the caller and the request (FdpController).
   */
  deriveTagsWith(deriver: TagDeriver): void {
    this.deriver = deriver;
  }

  /**
   * Called by the full pipeline of a derivable route for a caller it identified as `identity`
   * and an answer (200 or 304) for `version`: that key's later conditional GETs may have their
   * tag derived here. Kept only when the request carried the key alone (no Bearer token, no key
   * in the query) and reached the app at the same version the answer shows, so the key was
   * checked at that version; `res`'s headers are what a derived 304 repeats.
   */
  rememberCaller(req: Request, res: Response, version: string, identity: string): void {
    const caller = this.indexable(req);
    if (caller === null || req.headers.authorization !== undefined) return;
    if ((req as Arrived)[ARRIVED_AT] !== version) return;
    this.derivedHeaders = Object.freeze(notModifiedHeaders(res));
    if (caller.apiKey === undefined) return;
    if (this.identities.version !== version)
      this.identities = { version, byKey: new Map<string, string>() };
    const { byKey } = this.identities;
    if (byKey.size >= MAX_IDENTITIES) byKey.clear();
    byKey.set(callerName(caller), identity);
  }

  /** The caller whose answers may be indexed, null when none may. */
  private indexable(req: Request): Caller | null {
    const caller = callerOf(req);
    if (!this.enabled || req.method !== 'GET' || caller === null) return null;
    // The older key-in-the-URL form, however the name is encoded: such URLs are never indexed,
    // so no raw key stays in memory.
    if (queryCarriesApiKey(req.originalUrl)) return null;
    return caller;
  }

  /** True when the request was answered here. */
  private tryAnswer(req: IncomingMessage, res: ServerResponse): boolean {
    const method = req.method ?? '';
    if (!READ_METHODS.has(method)) {
      this.tracker.writeStarted();
      res.once('close', () => this.tracker.writeEnded());
      return false;
    }
    if (method !== 'GET' || !this.enabled) return false;
    const version = this.tracker.known();
    (req as Arrived)[ARRIVED_AT] = version;
    const caller = callerOf(req);
    if (version === null || caller === null) return false;
    if (req.headers['transfer-encoding'] !== undefined) return false;
    const length = req.headers['content-length'];
    if (length !== undefined && length !== '0') return false;
    const key = this.keyOf(version, caller, req.url ?? '', req.headers.accept);
    const entry = this.index.get(key);
    if (entry === undefined) return this.tryNotModified(req, res, key, version, caller);
    if (entry.expiresAt !== undefined && Date.now() >= entry.expiresAt) return false;
    if (this.refused?.(req)) return false;
    this.answer(req, res, entry);
    return true;
  }

  /**
   * An If-None-Match naming the tag the entity-tag index holds for this key: an empty 304 with
   * the headers the framework's 304 sent. True when answered.
   */
  private tryNotModified(
    req: IncomingMessage,
    res: ServerResponse,
    key: string,
    version: string,
    caller: Caller,
  ): boolean {
    const ifNoneMatch = req.headers['if-none-match'];
    if (ifNoneMatch === undefined) return false;
    const tag = this.tags.get(key) ?? this.derive(req, version, caller);
    if (tag === undefined || !matchesEtag(ifNoneMatch, tag.etag)) return false;
    if (this.refused?.(req)) return false;
    const id = this.track(req, res, tag.route);
    res.writeHead(304, [...tag.headers, 'etag', tag.etag, 'x-request-id', id]);
    res.end();
    return true;
  }

  /**
   * The tag of the request's answer as the deriver says it, for a caller the full pipeline has
   * identified at this version (or one with no credential: anonymous), else undefined.
   */
  private derive(req: IncomingMessage, version: string, caller: Caller): TagEntry | undefined {
    const headers = this.derivedHeaders;
    if (this.deriver === undefined || headers === undefined) return undefined;
    // The deriver reads no key from the query; a URL carrying one is the framework's to answer.
    if (queryCarriesApiKey(req.url ?? '')) return undefined;
    let identity: string | undefined = viewerIdentity(undefined);
    if (caller.apiKey !== undefined)
      identity =
        this.identities.version === version
          ? this.identities.byKey.get(callerName(caller))
          : undefined;
    if (identity === undefined) return undefined;
    const derived = this.deriver(req.url ?? '', req.headers.accept, version, identity);
    return derived === undefined ? undefined : { ...derived, headers };
  }

  /** Gives the request its id and counts and logs it when it ends, as the framework does. */
  private track(req: IncomingMessage, res: ServerResponse, route: string): string {
    const started = performance.now();
    const id = assignRequestId(req);
    res.once('close', () => {
      this.metrics?.record(req, res, route, started);
      logRequestCompleted(req, res, Math.round(performance.now() - started));
    });
    return id;
  }

  private answer(req: IncomingMessage, res: ServerResponse, entry: FastEntry): void {
    const id = this.track(req, res, entry.route);
    // Headers as one flat list: writeHead then skips the per-header bookkeeping of setHeader.
    const ifNoneMatch = req.headers['if-none-match'];
    const ifModifiedSince = req.headers['if-modified-since'];
    if (
      ifNoneMatch !== undefined
        ? matchesEtag(ifNoneMatch, entry.etag)
        : notModifiedSince(entry.lastModified, ifModifiedSince)
    ) {
      // A 304 carries the validators but no body, so no Content-Length.
      res.writeHead(304, [...entry.headers.slice(0, -2), 'x-request-id', id]);
      res.end();
      return;
    }
    res.writeHead(200, [...entry.headers, 'x-request-id', id]);
    endWithBody(res, entry.body);
  }

  /**
   * Accept is part of the key: an answer negotiated by type (the FAIR Data Point's Turtle and
   * JSON-LD at one URL) is another answer; a JSON route gets an entry per Accept its callers send.
   */
  private keyOf(version: string, caller: Caller, url: string, accept: string | undefined): string {
    return `${version}\n${callerName(caller)}\n${accept ?? ''}\n${url}`;
  }
}

/**
 * `res`'s headers as `writeHead` takes them, `own` in place of those of the same names, with the
 * body's Content-Length; never the per-request id.
 */
function headerList(res: Response, own: Record<string, string>, bytes: number): string[] {
  // Per request: set again on each answer.
  const headers = headersSet(
    res,
    (name) => name === 'x-request-id' || name === 'content-length' || name in own,
  );
  for (const [name, value] of Object.entries(own)) headers.push(name, value);
  headers.push('content-length', String(bytes));
  return headers;
}

/** `shared` (as headersSet lists them) with `own` in place of those of the same names, as headerList. */
function withOwn(shared: string[], own: Record<string, string>, bytes: number): string[] {
  const headers: string[] = [];
  for (let i = 0; i < shared.length; i += 2)
    if (!(shared[i] in own)) headers.push(shared[i], shared[i + 1]);
  for (const [name, value] of Object.entries(own)) headers.push(name, value);
  headers.push('content-length', String(bytes));
  return headers;
}

/** Headers set on `res` that a 304 repeats: all but the body's and the per-request ones. */
const NOT_IN_304 = new Set([
  'x-request-id',
  'content-length',
  'content-type',
  'etag',
  'last-modified',
  'link',
]);
const notModifiedHeaders = (res: Response) => headersSet(res, (name) => NOT_IN_304.has(name));

/** The headers set on `res` but those `skip` names, as `writeHead` takes them. */
function headersSet(res: Response, skip: (name: string) => boolean): string[] {
  const headers: string[] = [];
  for (const name of res.getHeaderNames()) {
    if (skip(name)) continue;
    const value = res.getHeader(name)!;
    for (const one of Array.isArray(value) ? value : [value]) headers.push(name, String(one));
  }
  return headers;
}

/** If-Modified-Since (without If-None-Match) holds for an answer last modified then. */
function notModifiedSince(lastModified: string | undefined, since: string | undefined): boolean {
  if (lastModified === undefined || since === undefined) return false;
  return Date.parse(lastModified) <= Date.parse(since);
}
