import { OneOfParam, PathTextParam, PositiveIntParam } from '@app/platform';
import { RDF_FORMATS, type RdfFormat } from './rdf-writers';

export class DcatQuery {
  @OneOfParam(
    'Serialisation, for clients that cannot set Accept: ttl (text/turtle), jsonld (application/ld+json), rdf (application/rdf+xml)',
    RDF_FORMATS,
  )
  format?: RdfFormat;

  @PositiveIntParam('Page of the catalog (Hydra partial collection view), from 1')
  page?: number;
}

export class DcatFormatQuery {
  @OneOfParam('Serialisation: ttl, jsonld or rdf (overrides Accept)', RDF_FORMATS)
  format?: RdfFormat;
}

export class DcatDatasetParams {
  @PathTextParam('Dataset accession', 20)
  accession!: string;
}
