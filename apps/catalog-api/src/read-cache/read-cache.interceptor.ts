import { Readable } from 'node:stream';
import {
  CallHandler,
  ExecutionContext,
  Injectable,
  NestInterceptor,
  StreamableFile,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { getMetadataStorage } from 'class-validator';
import { from, lastValueFrom, Observable } from 'rxjs';
import { isApiKeyParameter, RequestWithPrincipal } from '@app/auth';
import { routeTemplate } from '@app/platform';
import { viewerIdentity } from '../auth/viewer';
import { attachSnapshot, CACHED_READ, CachedReadOptions } from './cached-read-options';
import { FastReads } from './fast-reads';
import { matchesEtag } from './json-body';
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

/** The query parameters a route's handler has read, learned from its builds. */
interface QueryReads {
  names: Set<string>;
  /** It listed the parameters (a check for unknown ones): every parameter matters. */
  enumerated: boolean;
  /** Learned from builds (else declared by the handler's input DTOs). */
  learned: boolean;
}

/**
 * The parameters a handler declares in its input DTOs (the classes among its parameter types
 * that carry class-validator rules, as every catalog query DTO does): the pipe builds the
 * handler's input from these alone, so they are all of the query that can change its answer.
 * Undefined when it has no such parameter (its reads of `req.query` are then learned).
 */
function declaredQueryReads(controller: object, handler: string): QueryReads | undefined {
  const types = (Reflect.getMetadata('design:paramtypes', controller, handler) ?? []) as unknown[];
  const names = types.flatMap((type) =>
    typeof type === 'function'
      ? getMetadataStorage()
          .getTargetValidationMetadatas(type, '', true, false)
          .map((rule) => rule.propertyName)
      : [],
  );
  return names.length === 0
    ? undefined
    : { names: new Set(names), enumerated: false, learned: false };
}

/**
 * `req.query` for one build: records what the handler reads, so a request differing only in
 * parameters the route never reads (`?utm=…`) is the same answer, not another build.
 */
function recordingQuery(req: Request, reads: QueryReads): void {
  const note = (name: string | symbol) => {
    if (typeof name === 'string') reads.names.add(name);
  };
  const query = new Proxy(req.query, {
    get: (target, name, receiver) => (note(name), Reflect.get(target, name, receiver)),
    has: (target, name) => (note(name), Reflect.has(target, name)),
    getOwnPropertyDescriptor: (target, name) => (
      note(name),
      Reflect.getOwnPropertyDescriptor(target, name)
    ),
    ownKeys: (target) => ((reads.enumerated = true), Reflect.ownKeys(target)),
  });
  Object.defineProperty(req, 'query', { value: query, configurable: true, writable: true });
}

/**
 * Path and the values of the parameters the route reads. Equal for two requests, the handler
 * reads the same inputs and answers the same; before any build, the whole query.
 */
function answerKey(req: Request, reads: QueryReads | undefined): string {
  if (reads === undefined || reads.enumerated) return requestKey(req);
  const query = req.query;
  const values = [...reads.names]
    .sort()
    .map((name) => `${name}=${JSON.stringify(query[name]) ?? '-'}`);
  return `${req.path}?${values.join('&')}`;
}

/**
 * Serves a @CachedRead() route from the read cache, else runs its handler in the read's
 * snapshot and stores the JSON of what it returned. Either way it hands Nest the stored bytes
 * as they are (a StreamableFile, which Nest pipes without serialising again): 200 with its
 * ETag (an empty 304 when `If-None-Match` matches), private and revalidated, since answers
 * differ per caller.
 */
@Injectable()
export class ReadCacheInterceptor implements NestInterceptor {
  /** By route template: one handler each. */
  private readonly reads = new Map<string, QueryReads>();

  constructor(
    private readonly reflector: Reflector,
    private readonly cache: ReadCacheService,
    private readonly fastReads: FastReads,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<StreamableFile> {
    const options = this.reflector.get<CachedReadOptions>(CACHED_READ, context.getHandler());
    const http = context.switchToHttp();
    const req = http.getRequest<Request>();
    const route = routeTemplate(req);
    if (!this.reads.has(route)) {
      const declared = declaredQueryReads(context.getClass().prototype, context.getHandler().name);
      if (declared) this.reads.set(route, declared);
    }
    return from(
      this.respond(req, http.getResponse(), options, (manager) => {
        attachSnapshot(req, manager);
        const known = this.reads.get(route);
        if (known === undefined || known.learned) {
          // No input DTO: what the handler reads of the raw query is learned from its builds.
          const reads = known ?? { names: new Set<string>(), enumerated: false, learned: true };
          this.reads.set(route, reads);
          recordingQuery(req, reads);
        }
        return lastValueFrom(next.handle());
      }),
    );
  }

  private async respond(
    req: Request & RequestWithPrincipal,
    res: Response,
    options: CachedReadOptions,
    produce: Producer,
  ): Promise<StreamableFile> {
    const route = routeTemplate(req);
    // Dates no write changes: today is part of the key.
    const today = options.untilEndOfUtcDay ? `|${new Date().toISOString().slice(0, 10)}` : '';
    const key: ReadKey = {
      route,
      identity: viewerIdentity(req.principal),
      request: requestKey(req) + today,
      answer: () => answerKey(req, this.reads.get(route)) + today,
      singleStatement: options.singleStatement,
      expiresAt: options.untilEndOfUtcDay ? nextUtcMidnight() : undefined,
    };
    const { version, entry } = await this.cache.load(key, produce);
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.setHeader('ETag', entry.etag);
    // Per-caller data: shared caches must not keep it, clients must revalidate.
    res.setHeader('Cache-Control', 'private, no-cache');
    res.setHeader('Vary', 'X-API-Key, Authorization');
    this.fastReads.remember(req, res, version, entry, key.expiresAt);
    if (matchesEtag(req.headers['if-none-match'], entry.etag)) {
      res.status(304);
      return new StreamableFile(Readable.from([]));
    }
    res.status(200);
    res.setHeader('Content-Length', entry.bytes);
    return new StreamableFile(Readable.from(entry.body, { objectMode: false }));
  }
}
