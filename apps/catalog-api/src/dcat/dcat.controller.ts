import {
  Controller,
  Get,
  Header,
  Headers,
  Param,
  Query,
  Req,
  StreamableFile,
} from '@nestjs/common';
import { ApiResponse, ApiTags } from '@nestjs/swagger';
import type { IncomingMessage } from 'node:http';
import { CurrentPrincipal, OptionalAuth, Principal, Public } from '@app/auth';
import { admitStreamedAnswer, weighStreamedAnswer } from '@app/platform';
import { ApiCall } from '../common/api-docs';
import { viewerOf } from '../auth/viewer';
import { acceptedTypes } from './accept-header';
import { DcatDatasetParams, DcatFormatQuery, DcatQuery } from './dcat.dto';
import type { DcatViewer } from './dcat.repository';
import { DCAT_CONTEXT, DcatService, RdfAnswer } from './dcat.service';
import { MEDIA_TYPES, type RdfFormat } from './rdf-writers';

/** A 200 in the three serialisations (the body is RDF, not the catalog's JSON). */
const RdfResponse = (description: string) =>
  ApiResponse({
    status: 200,
    description,
    content: {
      [MEDIA_TYPES.ttl]: { schema: { type: 'string', description: 'Turtle' } },
      [MEDIA_TYPES.jsonld]: { schema: { type: 'object', description: 'JSON-LD 1.1' } },
      [MEDIA_TYPES.rdf]: { schema: { type: 'string', description: 'RDF/XML' } },
    },
  });

/** Accept's media types by preference (q, then order), mapped to a format; Turtle by default. */
export function negotiate(accept: string | undefined, format?: RdfFormat): RdfFormat {
  if (format !== undefined) return format;
  for (const type of acceptedTypes(accept ?? '')) {
    if (type === MEDIA_TYPES.ttl || type === 'text/*' || type === '*/*') return 'ttl';
    if (type === MEDIA_TYPES.jsonld || type === 'application/json') return 'jsonld';
    if (type === MEDIA_TYPES.rdf || type === 'application/xml') return 'rdf';
  }
  return 'ttl';
}

/**
 * The answer, weighed by the datasets it holds until its client has taken it (its page, from
 * before its first byte until its last): refused (503) when the answers being sent would hold too
 * many, its read stopped. A failure once it is begun aborts the response, whether or not its
 * head has left: neither a short answer that looks whole nor Nest's 400 for a failed stream.
 */
function stream(req: IncomingMessage, answer: RdfAnswer): StreamableFile {
  try {
    weighStreamedAnswer(req, answer.datasets);
  } catch (refused) {
    answer.body.destroy();
    throw refused;
  }
  const file = new StreamableFile(answer.body, { type: `${answer.mediaType}; charset=utf-8` });
  return file.setErrorHandler((error, res) => {
    file.errorLogger(error);
    res.destroy?.();
  });
}

const viewer = (principal: Principal | undefined): DcatViewer =>
  principal === undefined ? { kind: 'anonymous' } : viewerOf(principal);

@ApiTags('dcat')
@Controller('api/dcat')
export class DcatController {
  constructor(private readonly dcat: DcatService) {}

  @ApiCall({
    summary: 'The catalog as DCAT-AP 3.0.1 / HealthDCAT-AP, one Hydra page',
    caller: 'public; any valid key sees more',
    description:
      'Without a key: published datasets; with a key: what the key may see. Turtle by default; ' +
      'Accept or `format` choose JSON-LD or RDF/XML. Pages of 1,000 datasets with ' +
      '`hydra:next`/`hydra:last`.',
    responses: [],
    errors: [404],
  })
  @RdfResponse('The catalog page')
  @Get()
  @OptionalAuth()
  @Header('Vary', 'Accept')
  async catalog(
    @Query() query: DcatQuery,
    @Headers('accept') accept: string | undefined,
    @CurrentPrincipal() principal: Principal | undefined,
    @Req() req: IncomingMessage,
  ) {
    const format = negotiate(accept, query.format);
    // The page is weighed from before its read until the client has taken the answer.
    admitStreamedAnswer(req);
    return stream(req, await this.dcat.catalogPage(viewer(principal), format, query.page ?? 1));
  }

  @ApiCall({
    summary: 'The JSON-LD context of the DCAT export',
    caller: 'public',
    description:
      "DCAT-AP 3.0.1's context without its five `Xsd:*` terms, which JSON-LD 1.1 processors refuse.",
    responses: [{ status: 200, description: 'The context', body: { type: 'object' } }],
  })
  @Get('context.jsonld')
  @Public()
  context(): StreamableFile {
    // The media type goes with the answer, not as a route header: a route header is set before
    // the request is read, so a refused request's error would carry it too.
    return new StreamableFile(Buffer.from(DCAT_CONTEXT), {
      type: 'application/ld+json; charset=utf-8',
    });
  }

  @ApiCall({
    summary: 'One dataset as DCAT-AP 3.0.1 / HealthDCAT-AP',
    caller: 'public; any valid key sees more',
    description: 'A dataset the caller may see (without a key: a published one); else 404.',
    responses: [],
    errors: [404],
  })
  @RdfResponse('The dataset')
  @Get('datasets/:accession')
  @OptionalAuth()
  @Header('Vary', 'Accept')
  async dataset(
    @Param() { accession }: DcatDatasetParams,
    @Query() query: DcatFormatQuery,
    @Headers('accept') accept: string | undefined,
    @CurrentPrincipal() principal: Principal | undefined,
    @Req() req: IncomingMessage,
  ) {
    const format = negotiate(accept, query.format);
    admitStreamedAnswer(req);
    return stream(req, await this.dcat.dataset(viewer(principal), format, accession));
  }
}
