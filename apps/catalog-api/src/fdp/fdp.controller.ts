import { Controller, Get, Headers, Param, Query, Req, Res } from '@nestjs/common';
import { ApiProduces, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { AppError } from '@app/errors';
import { CurrentPrincipal, OptionalAuth, Principal, Public } from '@app/auth';
import { MAX_INT } from '@app/platform';
import { ApiCall } from '../common/api-docs';
import { acceptedTypes } from '../dcat/accept-header';
import { viewerIdentity, viewerOf } from '../auth/viewer';
import { FastReads } from '../read-cache/fast-reads';
import { endWithBody } from '../read-cache/json-body';
import {
  FdpCatalogQuery,
  FdpDatasetParams,
  FdpDistributionParams,
  FdpFormat,
  FdpFormatQuery,
  FdpProfileParams,
} from './fdp.dto';
import { FdpAnswer, FdpReader, FdpService, FdpTarget, RecordTarget } from './fdp.service';

const TYPES: Record<string, FdpFormat | undefined> = {
  'text/turtle': 'ttl',
  'application/x-turtle': 'ttl',
  'text/*': 'ttl',
  '*/*': 'ttl',
  'application/ld+json': 'jsonld',
  'application/json': 'jsonld',
  'application/*': 'jsonld',
};

class NotAcceptableError extends AppError {
  constructor() {
    super(
      406,
      'not_acceptable',
      'This FAIR Data Point serves text/turtle and application/ld+json',
      {
        acceptable: ['text/turtle', 'application/ld+json'],
      },
    );
  }
}

/** Accept's best type the FDP serves (q-values honoured); none given: Turtle; none served: 406. */
export function negotiateFdp(accept: string | undefined, format?: FdpFormat): FdpFormat {
  if (format !== undefined) return format;
  if (accept === undefined || accept.trim() === '') return 'ttl';
  for (const type of acceptedTypes(accept)) {
    const found = TYPES[type];
    if (found !== undefined) return found;
  }
  throw new NotAcceptableError();
}

const reader = (principal: Principal | undefined): FdpReader => ({
  viewer: principal === undefined ? { kind: 'anonymous' } : viewerOf(principal),
  identity: viewerIdentity(principal),
});

/** The route templates of the records (for the fast index's metrics). */
const RECORD_ROUTES = {
  root: '/fdp',
  catalog: '/fdp/catalog',
  dataset: '/fdp/dataset/:accession',
  distribution: '/fdp/distribution/:accession/:key',
};
/** The records a read may bring with it. */
const COMPANION_ROUTES = {
  dataset: RECORD_ROUTES.dataset,
  distribution: RECORD_ROUTES.distribution,
};
/** The bounds FdpDatasetParams and FdpDistributionParams put on the path's parts. */
const MAX_ACCESSION = 20;
const MAX_KEY = 40;

/** A path segment as Express hands it to a route (decoded), or undefined when it cannot be. */
function segment(raw: string | undefined, maxLength: number): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  try {
    const value = decodeURIComponent(raw);
    return value.length <= maxLength ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The record a GET of `url` (path and query as sent) asks for, and its `?format=`, exactly as the
 * routes below read it; undefined for every URL they might read otherwise or refuse (another
 * spelling of the path, a trailing slash, an invalid or repeated parameter, any other
 * parameter: an API key in the query among them): those are left to the framework.
 */
export function recordRequestOf(
  url: string,
): { target: RecordTarget; format?: FdpFormat; route: string } | undefined {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  let page: number | undefined;
  let format: FdpFormat | undefined;
  if (q >= 0)
    for (const part of url.slice(q + 1).split('&')) {
      const eq = part.indexOf('=');
      const name = eq < 0 ? part : part.slice(0, eq);
      const value = eq < 0 ? '' : part.slice(eq + 1);
      if (name === 'page' && page === undefined && /^[1-9][0-9]{0,9}$/.test(value)) {
        page = Number(value);
        if (page > MAX_INT) return undefined;
      } else if (
        name === 'format' &&
        format === undefined &&
        (value === 'ttl' || value === 'jsonld')
      )
        format = value;
      else return undefined;
    }
  const parts = path.split('/');
  if (parts[0] !== '' || parts[1] !== 'fdp') return undefined;
  const [, , kind, first, second] = parts;
  if (kind === 'catalog' && parts.length === 3)
    return { target: { kind: 'catalog', page: page ?? 1 }, format, route: RECORD_ROUTES.catalog };
  if (page !== undefined) return undefined;
  if (parts.length === 2) return { target: { kind: 'root' }, format, route: RECORD_ROUTES.root };
  const accession = segment(first, MAX_ACCESSION);
  if (accession === undefined) return undefined;
  if (kind === 'dataset' && parts.length === 4)
    return { target: { kind: 'dataset', accession }, format, route: RECORD_ROUTES.dataset };
  const key = segment(second, MAX_KEY);
  if (kind === 'distribution' && parts.length === 5 && key !== undefined)
    return {
      target: { kind: 'distribution', accession, key },
      format,
      route: RECORD_ROUTES.distribution,
    };
  return undefined;
}

/** Where a client asks for `target` (the routes below), or undefined for the others. */
function pathOf(target: FdpTarget): string | undefined {
  const seg = encodeURIComponent;
  if (target.kind === 'dataset') return `/fdp/dataset/${seg(target.accession)}`;
  if (target.kind === 'distribution')
    return `/fdp/distribution/${seg(target.accession)}/${seg(target.key)}`;
  return undefined;
}

/** Content-Type of the records' types, one string each. */
const CONTENT_TYPES: Record<string, string | undefined> = {
  'text/turtle': 'text/turtle; charset=utf-8',
  'application/ld+json': 'application/ld+json; charset=utf-8',
};

/**
 * Link header values by their list: most records share their kind's list (FdpService), and a
 * read-ahead indexes hundreds of them, each keeping its headers.
 */
const linkHeaders = new WeakMap<readonly string[], string>();
function linkHeader(links: readonly string[]): string {
  let header = linkHeaders.get(links);
  if (header === undefined) linkHeaders.set(links, (header = links.join(', ')));
  return header;
}

/** The headers of an answer that are its own (the rest are the app's, the same for every record). */
function ownHeaders(answer: FdpAnswer): Record<string, string> {
  const headers: Record<string, string> = {
    etag: answer.etag,
    'content-type': CONTENT_TYPES[answer.mediaType] ?? `${answer.mediaType}; charset=utf-8`,
  };
  if (answer.links.length > 0) headers.link = linkHeader(answer.links);
  if (answer.lastModified !== undefined) headers['last-modified'] = answer.lastModified;
  return headers;
}
const RECORD_DOC: { caller: 'public; any valid key sees more'; responses: []; errors: number[] } = {
  caller: 'public; any valid key sees more',
  responses: [],
  errors: [404, 406],
};

@ApiTags('fdp')
@ApiProduces('text/turtle', 'application/ld+json')
@Controller('fdp')
export class FdpController {
  constructor(
    private readonly fdp: FdpService,
    private readonly fastReads: FastReads,
  ) {
    // A record's tag says nothing but the version, the caller, the URL and the type: the fast
    // path answers a conditional GET of any record from them, held or not (issue 58, item 5).
    fastReads.deriveTagsWith((url, accept, version, identity) => {
      const asked = recordRequestOf(url);
      if (asked === undefined) return undefined;
      let format: FdpFormat;
      try {
        format = negotiateFdp(accept, asked.format);
      } catch {
        return undefined;
      }
      return { etag: fdp.tagOf(version, identity, asked.target, format), route: asked.route };
    });
  }

  /**
   * Sends the answer, or an empty 304 when the client holds it already: If-None-Match (compared
   * by the service before anything is built) first, else If-Modified-Since (RFC 9110 §13.2.2).
   * The answer, and the records read with it, go to the fast index for this caller and Accept
   * (when the type came from Accept alone): a harvester's next GETs are answered in front of
   * the framework. Their tags (and the tag of a 304) go to the entity-tag index too, which
   * keeps more than the fast index: a conditional GET of a record the fast index has let go is
   * answered there as well.
   */
  private async serve(
    req: Request,
    res: Response,
    principal: Principal | undefined,
    target: FdpTarget,
    accept: string | undefined,
    format: FdpFormat | undefined,
    inm: string | undefined,
    ims: string | undefined,
  ) {
    const chosen = negotiateFdp(accept, format);
    const who = reader(principal);
    const read = await this.fdp.answer(who, target, chosen, inm);
    res.setHeader('ETag', 'notModified' in read ? read.etag : read.answer.etag);
    // Each caller sees its own catalog, in the type it asked for.
    res.setHeader('Vary', 'Accept, X-API-Key, Authorization');
    res.setHeader('Cache-Control', 'no-cache');
    if (read.version !== null && target.kind !== 'profile' && target.kind !== 'shacl')
      this.fastReads.rememberCaller(req, res, read.version, who.identity);
    if ('notModified' in read) {
      if (read.version !== null)
        this.fastReads.rememberTags(req, res, read.version, [{ etag: read.etag }]);
      res.status(304).end();
      return;
    }
    const { answer } = read;
    for (const [name, value] of Object.entries(ownHeaders(answer))) res.setHeader(name, value);
    if (read.version !== null) {
      const companions =
        format === undefined
          ? read.companions.flatMap(({ target: t, answer: a }) => {
              const url = pathOf(t);
              if (url === undefined || !(t.kind in COMPANION_ROUTES)) return [];
              const route = COMPANION_ROUTES[t.kind as keyof typeof COMPANION_ROUTES];
              return [{ url, route, response: a, headers: ownHeaders(a) }];
            })
          : [];
      this.fastReads.rememberTags(req, res, read.version, [
        { etag: answer.etag },
        ...companions.map(({ url, route, response }) => ({ url, route, etag: response.etag })),
      ]);
      this.fastReads.remember(req, res, read.version, answer);
      if (companions.length > 0) this.fastReads.rememberAlso(req, res, read.version, companions);
    }
    // If-Modified-Since counts only without If-None-Match (RFC 9110 §13.1.3).
    if (
      inm === undefined &&
      ims !== undefined &&
      answer.lastModified !== undefined &&
      Date.parse(answer.lastModified) <= Date.parse(ims)
    ) {
      res.status(304).end();
      return;
    }
    res.status(200);
    // Its length is known: the body goes out framed by it, not chunked.
    res.setHeader('Content-Length', answer.bytes);
    endWithBody(res, answer.body);
  }

  @ApiCall({
    ...RECORD_DOC,
    summary: 'The FAIR Data Point: its root record (FDP 1.2)',
    description:
      'fdp-o:FAIRDataPoint and dcat:DataService, with an LDP DirectContainer of its catalog. ' +
      'Turtle by default, JSON-LD by Accept; ETag, Last-Modified and 304s; Link rel=profile.',
  })
  @Get()
  @OptionalAuth()
  async root(
    @Req() req: Request,
    @Res() res: Response,
    @Query() q: FdpFormatQuery,
    @Headers('accept') accept: string | undefined,
    @Headers('if-none-match') inm: string | undefined,
    @Headers('if-modified-since') ims: string | undefined,
    @CurrentPrincipal() principal: Principal | undefined,
  ) {
    await this.serve(req, res, principal, { kind: 'root' }, accept, q.format, inm, ims);
  }

  @ApiCall({
    ...RECORD_DOC,
    summary: 'The catalog record, its datasets in an LDP container (paged)',
    description: 'Pages of DCAT_PAGE_SIZE datasets; Link rel=next/prev/first/last (LDP paging).',
  })
  @Get('catalog')
  @OptionalAuth()
  async catalog(
    @Req() req: Request,
    @Res() res: Response,
    @Query() q: FdpCatalogQuery,
    @Headers('accept') accept: string | undefined,
    @Headers('if-none-match') inm: string | undefined,
    @Headers('if-modified-since') ims: string | undefined,
    @CurrentPrincipal() principal: Principal | undefined,
  ) {
    const target: FdpTarget = { kind: 'catalog', page: q.page ?? 1 };
    await this.serve(req, res, principal, target, accept, q.format, inm, ims);
  }

  @ApiCall({
    ...RECORD_DOC,
    errors: [404, 406, 410],
    summary: 'A dataset record, its distributions in an LDP container',
    description: 'What /api/dcat publishes to the caller; 410 once every exposure is withdrawn.',
  })
  @Get('dataset/:accession')
  @OptionalAuth()
  async dataset(
    @Req() req: Request,
    @Res() res: Response,
    @Param() p: FdpDatasetParams,
    @Query() q: FdpFormatQuery,
    @Headers('accept') accept: string | undefined,
    @Headers('if-none-match') inm: string | undefined,
    @Headers('if-modified-since') ims: string | undefined,
    @CurrentPrincipal() principal: Principal | undefined,
  ) {
    const target: FdpTarget = { kind: 'dataset', accession: p.accession };
    await this.serve(req, res, principal, target, accept, q.format, inm, ims);
  }

  @ApiCall({
    ...RECORD_DOC,
    errors: [404, 406, 410],
    summary: 'A distribution record',
  })
  @Get('distribution/:accession/:key')
  @OptionalAuth()
  async distribution(
    @Req() req: Request,
    @Res() res: Response,
    @Param() p: FdpDistributionParams,
    @Query() q: FdpFormatQuery,
    @Headers('accept') accept: string | undefined,
    @Headers('if-none-match') inm: string | undefined,
    @Headers('if-modified-since') ims: string | undefined,
    @CurrentPrincipal() principal: Principal | undefined,
  ) {
    const target: FdpTarget = { kind: 'distribution', accession: p.accession, key: p.key };
    await this.serve(req, res, principal, target, accept, q.format, inm, ims);
  }

  @ApiCall({
    caller: 'public',
    responses: [],
    errors: [404, 406],
    summary: 'A record profile (prof:Profile) naming its SHACL shapes',
  })
  @Get('profile/:kind')
  @Public()
  async profile(
    @Req() req: Request,
    @Res() res: Response,
    @Param() p: FdpProfileParams,
    @Query() q: FdpFormatQuery,
    @Headers('accept') accept: string | undefined,
    @Headers('if-none-match') inm: string | undefined,
  ) {
    await this.serve(
      req,
      res,
      undefined,
      { kind: 'profile', profile: p.kind },
      accept,
      q.format,
      inm,
      undefined,
    );
  }

  @ApiCall({
    caller: 'public',
    responses: [],
    errors: [404],
    summary: "A profile's SHACL shapes (text/turtle)",
  })
  @Get('profile/:kind/shacl')
  @Public()
  async shacl(
    @Req() req: Request,
    @Res() res: Response,
    @Param() p: FdpProfileParams,
    @Headers('if-none-match') inm: string | undefined,
  ) {
    const target: FdpTarget = { kind: 'shacl', profile: p.kind };
    await this.serve(req, res, undefined, target, undefined, 'ttl', inm, undefined);
  }
}
