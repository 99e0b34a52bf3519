import {
  BooleanField,
  BooleanParam,
  InputProperty,
  PathTextParam,
  refuse,
  TextListField,
} from '@app/platform';
import { MAX_DRS_ID_LENGTH } from './drs-ids';

/** A passport is a JWT: a few kilobytes of visas, at most this many characters each. */
const MAX_PASSPORT_CHARS = 1024 * 1024;
const passports = () =>
  TextListField(
    { max: MAX_PASSPORT_CHARS },
    { description: 'GA4GH passports (JWTs whose `ga4gh_passport_v1` lists visas), or visas' },
  );
/** An id in a bulk list: longer than any id of this service, it is refused before lookup. */
const bulkIds = () =>
  TextListField(
    { max: MAX_DRS_ID_LENGTH },
    { required: true, description: 'DRS object ids (at most maxBulkRequestLength, else 413)' },
  );

export class ObjectParams {
  @PathTextParam('A DRS object id', MAX_DRS_ID_LENGTH)
  object_id!: string;
}

export class AccessParams extends ObjectParams {
  @PathTextParam('An access_id of the object (`https`)', 64)
  access_id!: string;
}

export class BulkAccessParams {
  @PathTextParam('An access_id (`https`)', 64)
  access_id!: string;
}

export class ExpandQuery {
  @BooleanParam('Accepted and ignored: no object of this service is a bundle')
  expand?: boolean;
}

export class PassportsBody {
  @passports()
  passports?: string[];

  @BooleanField({ description: 'Accepted and ignored: no object of this service is a bundle' })
  expand?: boolean;
}

export class BulkObjectsBody extends PassportsBody {
  @bulkIds()
  bulk_object_ids!: string[];
}

export class BulkOptionsBody {
  @bulkIds()
  bulk_object_ids!: string[];
}

export class BulkAccessItem {
  bulk_object_id!: string;
  bulk_access_ids!: string[];
}

/** `{bulk_object_id, bulk_access_ids}` items, each checked like the single forms' ids. */
const readAccessItems = (value: unknown): unknown => {
  if (!Array.isArray(value)) return refuse('must be an array');
  for (const [index, item] of value.entries()) {
    const { bulk_object_id: id, bulk_access_ids: accessIds } = (item ?? {}) as Record<
      string,
      unknown
    >;
    if (typeof id !== 'string' || id.length === 0 || id.length > MAX_DRS_ID_LENGTH) {
      return refuse(`[${index}].bulk_object_id must be a DRS object id`);
    }
    if (
      !Array.isArray(accessIds) ||
      accessIds.length > 16 ||
      !accessIds.every((a) => typeof a === 'string' && a.length <= 64)
    ) {
      return refuse(`[${index}].bulk_access_ids must be a list of at most 16 access ids`);
    }
  }
  return value as BulkAccessItem[];
};

export class BulkAccessBody {
  @passports()
  passports?: string[];

  @InputProperty(
    {
      type: 'array',
      description: 'Objects and their access ids (at most maxBulkRequestLength, else 413)',
      items: {
        type: 'object',
        properties: {
          bulk_object_id: { type: 'string', maxLength: MAX_DRS_ID_LENGTH },
          bulk_access_ids: { type: 'array', items: { type: 'string', maxLength: 64 } },
        },
      },
    },
    readAccessItems,
    true,
  )
  bulk_object_access_ids!: BulkAccessItem[];
}
