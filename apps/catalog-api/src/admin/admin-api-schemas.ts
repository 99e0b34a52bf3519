import type { SchemaObject } from '@nestjs/swagger';
import { ENDPOINT_KEY_LENGTH } from '../auth/catalog-key.resolver';
import { PAGINATION, PARTNER_SCHEMA, successCounts } from '../common/api-schemas';
import { GRANT_OBJECT_TYPES, GRANTABLE_PERMISSIONS } from '../permissions/permission-grant.entity';
import { VOCABULARY_FORMATS } from '../terms/parsers/parse-vocabulary';
import { USER_KEY_LENGTH } from './users-admin.service';

/*
 * Bodies and answers of the administration routes (spec §5), as the services' shapes check
 * them (users-admin, endpoints-admin, exposures-admin, grants-admin, publishing, audit).
 */

const object = (properties: Record<string, SchemaObject>, required: string[] = []) => ({
  type: 'object' as const,
  required,
  properties,
});
const textOrNull: SchemaObject = { type: 'string', nullable: true };
const timestampOrNull: SchemaObject = { type: 'string', format: 'date-time', nullable: true };
const apiKey = (length: number): SchemaObject => ({
  type: 'string',
  minLength: length,
  maxLength: length,
  description: 'The key, shown this once (only its SHA-256 is kept)',
});

const userProperties = {
  id: { type: 'integer' },
  username: { type: 'string' },
  first_name: { type: 'string' },
  last_name: { type: 'string' },
  email: textOrNull,
  oidc_id: textOrNull,
  is_active: { type: 'boolean' },
  groups: { type: 'array', items: { type: 'string' } },
  affiliation: { type: 'string', nullable: true, description: 'Partner name' },
} satisfies Record<string, SchemaObject>;
export const USER_VIEW = object(userProperties, Object.keys(userProperties));
export const USER_CREATED = object({ ...userProperties, api_key: apiKey(USER_KEY_LENGTH) }, [
  ...Object.keys(userProperties),
  'api_key',
]);
export const USER_API_KEY = object({ api_key: apiKey(USER_KEY_LENGTH) }, ['api_key']);

export const ENDPOINT_CREATED = object(
  {
    id: { type: 'integer' },
    name: { type: 'string' },
    url_pattern: { type: 'string' },
    api_key: apiKey(ENDPOINT_KEY_LENGTH),
  },
  ['id', 'name', 'url_pattern', 'api_key'],
);

const exposureProperties = {
  id: { type: 'integer' },
  dataset: { type: 'string', nullable: true, description: 'Accession' },
  endpoint: { type: 'string' },
  form_id: { type: 'integer' },
  form_name: textOrNull,
  request_pdf_enabled: { type: 'boolean' },
  released_date: timestampOrNull,
  deprecated: { type: 'boolean' },
  deprecation_date: timestampOrNull,
  deprecation_notes: textOrNull,
} satisfies Record<string, SchemaObject>;
export const EXPOSURE_VIEW = object(exposureProperties, Object.keys(exposureProperties));

const grantProperties = {
  id: { type: 'integer' },
  user: textOrNull,
  group: textOrNull,
  permission: { type: 'string', enum: [...GRANTABLE_PERMISSIONS] },
  object_type: { type: 'string', enum: [...GRANT_OBJECT_TYPES] },
  object_id: { type: 'integer' },
} satisfies Record<string, SchemaObject>;
export const GRANT_VIEW = object(grantProperties, Object.keys(grantProperties));
export const GRANT_REVOKED = successCounts('revoked');

export const PUBLISHED_PARTNER: SchemaObject = {
  ...PARTNER_SCHEMA,
  properties: { ...PARTNER_SCHEMA.properties, is_published: { type: 'boolean' } },
};
export const PUBLISHED_COHORT = object(
  {
    source: { type: 'string', format: 'uri' },
    id_at_source: { type: 'string' },
    external_id: textOrNull,
    name: { type: 'string' },
    description: textOrNull,
    url: textOrNull,
    is_published: { type: 'boolean' },
  },
  ['source', 'id_at_source', 'external_id', 'name', 'description', 'url', 'is_published'],
);

export const VOCABULARY_BODY: SchemaObject = {
  type: 'string',
  description: 'An OBO file, or `term_id<TAB>label` lines',
  example: 'DOID:14330\tParkinson disease\n',
};
const counts = successCounts('inserted', 'updated', 'unchanged', 'total');
export const VOCABULARY_LOADED: SchemaObject = {
  ...counts,
  required: [...(counts.required ?? []), 'category', 'format'],
  properties: {
    ...counts.properties,
    category: { type: 'string' },
    format: { type: 'string', enum: [...VOCABULARY_FORMATS] },
  },
};

export const AUDIT_PAGE = object(
  {
    results: {
      type: 'array',
      items: object(
        {
          id: { type: 'integer' },
          at: { type: 'string', format: 'date-time' },
          actor: object({ kind: { type: 'string' }, id: textOrNull, name: textOrNull }, [
            'kind',
            'id',
            'name',
          ]),
          action: { type: 'string', example: 'expose' },
          object_type: { type: 'string', example: 'exposure' },
          object_id: textOrNull,
          change: { type: 'object', additionalProperties: true, description: 'Secrets removed' },
        },
        ['id', 'at', 'actor', 'action', 'object_type', 'object_id', 'change'],
      ),
    },
    pagination: PAGINATION,
  },
  ['results', 'pagination'],
);
