import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ENDPOINT_KEY_LENGTH } from '../auth/catalog-key.resolver';
import {
  Bool,
  Int,
  ListOf,
  One,
  OneOf,
  Pagination,
  SuccessStatus,
  Count,
  Text,
  TextOrNull,
  Texts,
  TimestampOrNull,
} from '../common/response-properties';
import { PartnerRecord } from '../partners/partners.dto';
import { GRANT_OBJECT_TYPES, GRANTABLE_PERMISSIONS } from '../visibility/permission-grant.entity';
import { VOCABULARY_FORMATS } from '../terms/parsers/parse-vocabulary';
import { USER_KEY_LENGTH } from './users-admin.service';

/** The answers of the administration routes (spec §5). */

const ApiKey = (length: number) =>
  Text({
    minLength: length,
    maxLength: length,
    description: 'The key, shown this once (only its SHA-256 is kept)',
  });

export class UserView {
  @Int() id!: number;
  @Text() username!: string;
  @Text() first_name!: string;
  @Text() last_name!: string;
  @TextOrNull() email!: string | null;
  @TextOrNull() oidc_id!: string | null;
  @Bool() is_active!: boolean;
  @Texts() groups!: string[];
  @TextOrNull({ description: 'Partner name' }) affiliation!: string | null;
}

export class UserCreated extends UserView {
  @ApiKey(USER_KEY_LENGTH) api_key!: string;
}

export class UserApiKey {
  @ApiKey(USER_KEY_LENGTH) api_key!: string;
}

export class EndpointCreated {
  @Int() id!: number;
  @Text() name!: string;
  @Text() url_pattern!: string;
  @ApiKey(ENDPOINT_KEY_LENGTH) api_key!: string;
}

export class ExposureView {
  @Int() id!: number;
  @TextOrNull({ description: 'Accession' }) dataset!: string | null;
  @Text() endpoint!: string;
  @Int() form_id!: number;
  @TextOrNull() form_name!: string | null;
  @Bool() request_pdf_enabled!: boolean;
  @TimestampOrNull() released_date!: string | null;
  @Bool() deprecated!: boolean;
  @TimestampOrNull() deprecation_date!: string | null;
  @TextOrNull() deprecation_notes!: string | null;
}

export class GrantView {
  @Int() id!: number;
  @TextOrNull() user!: string | null;
  @TextOrNull() group!: string | null;
  @OneOf(GRANTABLE_PERMISSIONS) permission!: string;
  @OneOf(GRANT_OBJECT_TYPES) object_type!: string;
  @Int() object_id!: number;
}

export class GrantRevoked extends SuccessStatus {
  @Count() revoked!: number;
}

export class PublishedPartner extends PartnerRecord {
  @ApiPropertyOptional({ type: Boolean }) is_published?: boolean;
}

export class PublishedCohort {
  @Text({ format: 'uri' }) source!: string;
  @Text() id_at_source!: string;
  @TextOrNull() external_id!: string | null;
  @Text() name!: string;
  @TextOrNull() description!: string | null;
  @TextOrNull() url!: string | null;
  @Bool() is_published!: boolean;
}

export class VocabularyLoaded extends SuccessStatus {
  @Count() inserted!: number;
  @Count() updated!: number;
  @Count() unchanged!: number;
  @Count() total!: number;
  @Text() category!: string;
  @OneOf(VOCABULARY_FORMATS) format!: string;
}

class AuditActorView {
  @Text() kind!: string;
  @TextOrNull() id!: string | null;
  @TextOrNull() name!: string | null;
}

class AuditEntry {
  @Int() id!: number;
  @Text({ format: 'date-time' }) at!: string;
  @One(AuditActorView) actor!: AuditActorView;
  @Text({ example: 'expose' }) action!: string;
  @Text({ example: 'exposure' }) object_type!: string;
  @TextOrNull() object_id!: string | null;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: 'Secrets removed',
  })
  change!: object;
}

export class AuditPage {
  @ListOf(AuditEntry) results!: AuditEntry[];
  @One(Pagination) pagination!: Pagination;
}

export class DatasetVpDiscoverable {
  @TextOrNull() accession!: string | null;
  @Bool() vp_discoverable!: boolean;
}
