import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { from, lastValueFrom, Observable } from 'rxjs';
import { isApiKeyParameter, RequestWithPrincipal } from '@app/auth';
import { routeTemplate } from '@app/platform';
import { viewerIdentity } from '../permissions/viewer';
import { attachSnapshot, CACHED_READ, CachedReadOptions } from './cached-read.options';
import { FastReads } from './fast-reads';
import { endWithBody, matchesEtag } from './json-body';
import { Producer, ReadCacheService, ReadKey } from './read-cache.service';

/** Start of the next UTC day, in epoch ms. */
function nextUtcMidnight(now = new Date()): number {
  return Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
}

/**
 * Path and query of the request, the query's parameters sorted (their order changes nothing)
 * and any that carries a key left out, whatever the encoding of its name: no key stays in memory.
 * Everything a handler can read is in the path or the query, so equal keys mean equal answers.
 */
function requestKey(req: Request): string {
  const url = req.originalUrl;
  const start = url.indexOf('?');
  if (start === -1) return url;
  const query = url
    .slice(start + 1)
    .split('&')
    .filter((part) => part !== '' && !isApiKeyParameter(part.split('=', 1)[0]))
    .sort();
  return `${url.slice(0, start)}?${query.join('&')}`;
}

/**
 * Serves a @CachedRead() route from the read cache, else runs its handler in the read's
 * snapshot, stores the JSON of what it returned and sends it: 200 with its ETag (304 when
 * `If-None-Match` matches), private and revalidated, since answers differ per caller.
 */
@Injectable()
export class ReadCacheInterceptor implements NestInterceptor {
  constructor(
    private readonly reflector: Reflector,
    private readonly cache: ReadCacheService,
    private readonly fastReads: FastReads,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<void> {
    const options = this.reflector.get<CachedReadOptions>(CACHED_READ, context.getHandler());
    const http = context.switchToHttp();
    return from(
      this.respond(http.getRequest(), http.getResponse(), options, (manager) => {
        attachSnapshot(http.getRequest<Request>(), manager);
        return lastValueFrom(next.handle());
      }),
    );
  }

  private async respond(
    req: Request & RequestWithPrincipal,
    res: Response,
    options: CachedReadOptions,
    produce: Producer,
  ): Promise<void> {
    const key: ReadKey = {
      route: routeTemplate(req),
      identity: viewerIdentity(req.principal),
      request: requestKey(req),
      singleStatement: options.singleStatement,
    };
    if (options.untilEndOfUtcDay) {
      key.request += `|${new Date().toISOString().slice(0, 10)}`;
      key.expiresAt = nextUtcMidnight();
    }
    const { version, entry } = await this.cache.load(key, produce);
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.setHeader('ETag', entry.etag);
    // Per-caller data: shared caches must not keep it, clients must revalidate.
    res.setHeader('Cache-Control', 'private, no-cache');
    res.setHeader('Vary', 'X-API-Key, Authorization');
    this.fastReads.remember(req, res, version, entry, key.expiresAt);
    if (matchesEtag(req.headers['if-none-match'], entry.etag)) {
      res.status(304).end();
      return;
    }
    res.status(200);
    res.setHeader('Content-Length', entry.bytes);
    endWithBody(res, entry.body);
  }
}
