import { Controller, Get, Headers, Param, Query, Res } from '@nestjs/common';
import { ApiProduces, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { AppError } from '@app/errors';
import { CurrentPrincipal, OptionalAuth, Principal, Public } from '@app/auth';
import { ApiCall } from '../common/api-docs';
import { acceptedTypes } from '../dcat/accept-header';
import { viewerIdentity, viewerOf } from '../auth/viewer';
import { endWithBody } from '../read-cache/json-body';
import {
  FdpCatalogQuery,
  FdpDatasetParams,
  FdpDistributionParams,
  FdpFormat,
  FdpFormatQuery,
  FdpProfileParams,
} from './fdp.dto';
import { FdpAnswer, FdpNotModified, FdpReader, FdpService, FdpTarget } from './fdp.service';

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

/**
 * Sends `answer`, or an empty 304 when the client holds it already: If-None-Match (compared by
 * the service before anything is built) first, else If-Modified-Since (RFC 9110 §13.2.2).
 */
function send(res: Response, answer: FdpAnswer | FdpNotModified, ifModifiedSince?: string) {
  res.setHeader('ETag', answer.etag);
  res.setHeader('Vary', 'Accept');
  res.setHeader('Cache-Control', 'no-cache');
  if ('notModified' in answer) {
    res.status(304).end();
    return;
  }
  if (answer.links.length > 0) res.setHeader('Link', answer.links.join(', '));
  if (answer.lastModified !== undefined) res.setHeader('Last-Modified', answer.lastModified);
  if (
    ifModifiedSince !== undefined &&
    answer.lastModified !== undefined &&
    Date.parse(answer.lastModified) <= Date.parse(ifModifiedSince)
  ) {
    res.status(304).end();
    return;
  }
  res.status(200).setHeader('Content-Type', `${answer.mediaType}; charset=utf-8`);
  endWithBody(res, answer.body);
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
  constructor(private readonly fdp: FdpService) {}

  private async serve(
    res: Response,
    principal: Principal | undefined,
    target: FdpTarget,
    accept: string | undefined,
    format: FdpFormat | undefined,
    inm: string | undefined,
    ims: string | undefined,
  ) {
    const chosen = negotiateFdp(accept, format);
    // If-Modified-Since counts only without If-None-Match (RFC 9110 §13.1.3).
    send(res, await this.fdp.answer(reader(principal), target, chosen, inm), inm ? undefined : ims);
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
    @Res() res: Response,
    @Query() q: FdpFormatQuery,
    @Headers('accept') accept: string | undefined,
    @Headers('if-none-match') inm: string | undefined,
    @Headers('if-modified-since') ims: string | undefined,
    @CurrentPrincipal() principal: Principal | undefined,
  ) {
    await this.serve(res, principal, { kind: 'root' }, accept, q.format, inm, ims);
  }

  @ApiCall({
    ...RECORD_DOC,
    summary: 'The catalog record, its datasets in an LDP container (paged)',
    description: 'Pages of DCAT_PAGE_SIZE datasets; Link rel=next/prev/first/last (LDP paging).',
  })
  @Get('catalog')
  @OptionalAuth()
  async catalog(
    @Res() res: Response,
    @Query() q: FdpCatalogQuery,
    @Headers('accept') accept: string | undefined,
    @Headers('if-none-match') inm: string | undefined,
    @Headers('if-modified-since') ims: string | undefined,
    @CurrentPrincipal() principal: Principal | undefined,
  ) {
    const target: FdpTarget = { kind: 'catalog', page: q.page ?? 1 };
    await this.serve(res, principal, target, accept, q.format, inm, ims);
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
    @Res() res: Response,
    @Param() p: FdpDatasetParams,
    @Query() q: FdpFormatQuery,
    @Headers('accept') accept: string | undefined,
    @Headers('if-none-match') inm: string | undefined,
    @Headers('if-modified-since') ims: string | undefined,
    @CurrentPrincipal() principal: Principal | undefined,
  ) {
    const target: FdpTarget = { kind: 'dataset', accession: p.accession };
    await this.serve(res, principal, target, accept, q.format, inm, ims);
  }

  @ApiCall({
    ...RECORD_DOC,
    errors: [404, 406, 410],
    summary: 'A distribution record',
  })
  @Get('distribution/:accession/:key')
  @OptionalAuth()
  async distribution(
    @Res() res: Response,
    @Param() p: FdpDistributionParams,
    @Query() q: FdpFormatQuery,
    @Headers('accept') accept: string | undefined,
    @Headers('if-none-match') inm: string | undefined,
    @Headers('if-modified-since') ims: string | undefined,
    @CurrentPrincipal() principal: Principal | undefined,
  ) {
    const target: FdpTarget = { kind: 'distribution', accession: p.accession, key: p.key };
    await this.serve(res, principal, target, accept, q.format, inm, ims);
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
    @Res() res: Response,
    @Param() p: FdpProfileParams,
    @Query() q: FdpFormatQuery,
    @Headers('accept') accept: string | undefined,
    @Headers('if-none-match') inm: string | undefined,
  ) {
    await this.serve(
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
    @Res() res: Response,
    @Param() p: FdpProfileParams,
    @Headers('if-none-match') inm: string | undefined,
  ) {
    const target: FdpTarget = { kind: 'shacl', profile: p.kind };
    send(res, await this.fdp.answer(reader(undefined), target, 'ttl', inm));
  }
}
