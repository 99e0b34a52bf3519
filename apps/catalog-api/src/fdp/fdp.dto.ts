import { OneOfParam, PathTextParam, PositiveIntParam } from '@app/platform';
import { PROFILE_KINDS } from './fdp-profiles';

/** The FAIR Data Point serves Turtle (its default) and JSON-LD, as its specification requires. */
export const FDP_FORMATS = ['ttl', 'jsonld'] as const;
export type FdpFormat = (typeof FDP_FORMATS)[number];

export class FdpFormatQuery {
  @OneOfParam(
    'Serialisation, overriding Accept: ttl (text/turtle) or jsonld (application/ld+json)',
    FDP_FORMATS,
  )
  format?: FdpFormat;
}

export class FdpCatalogQuery extends FdpFormatQuery {
  @PositiveIntParam("Page of the catalog's dataset container (LDP paging), from 1")
  page?: number;
}

export class FdpDatasetParams {
  @PathTextParam('Dataset accession', 20)
  accession!: string;
}

export class FdpDistributionParams extends FdpDatasetParams {
  @PathTextParam('Distribution key: storage-<id> or access-request', 40)
  key!: string;
}

export class FdpProfileParams {
  @PathTextParam(`Record kind: ${PROFILE_KINDS.join(', ')}`, 20)
  kind!: string;
}
