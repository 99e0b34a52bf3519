import { OneOfParam } from '@app/platform';
import { VOCABULARY_FORMATS, type VocabularyFormat } from '../terms/parsers/parse-vocabulary';

export class VocabularyLoadQuery {
  @OneOfParam(
    'Overrides the detection (OBO when the file has an OBO header or stanza)',
    VOCABULARY_FORMATS,
  )
  format?: VocabularyFormat;
}
