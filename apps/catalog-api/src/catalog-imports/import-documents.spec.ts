import type { Type } from '@nestjs/common';
import { IMPORT_RECORDS } from './catalog-import.dto';
import { IMPORT_KINDS, ITEM_SHAPES } from './import-shapes';
import type { FieldSpec, ListShape, RecordShape, Shape } from './shape-validators';

/**
 * The import documents keep their own validator (shape.ts: about 7 times as fast as DTO
 * classes), while their OpenAPI is the export records' (catalog-import.dto.ts). This holds the
 * two to the same fields, at every depth: a field the shapes accept is documented, and a
 * documented field is accepted (read, or ignored as export-only).
 */

// @nestjs/swagger's metadata keys (DECORATORS in @nestjs/swagger/dist/constants).
const PROPERTIES = 'swagger/apiModelPropertiesArray';
const PROPERTY = 'swagger/apiModelProperties';

type AnyRecord = RecordShape<Record<string, FieldSpec<unknown>>>;

/**
 * Fields an import reads that no export writes, so the export records do not document them; the
 * import document's description names them (catalog-import.dto.ts, IMPORT_ONLY).
 */
const IMPORT_ONLY = new Set(['datasets:storages.category', 'contracts:project']);

/** The documented properties of a DTO class, with the class of each nested record. */
function documented(dto: Type<unknown>): Map<string, Type<unknown> | undefined> {
  const names = ((Reflect.getMetadata(PROPERTIES, dto.prototype) ?? []) as string[]).map((n) =>
    n.replace(/^:/, ''),
  );
  return new Map(
    names.map((name) => {
      const { type } = (Reflect.getMetadata(PROPERTY, dto.prototype, name) ?? {}) as {
        type?: unknown;
      };
      const nested =
        typeof type === 'function' && Reflect.hasMetadata(PROPERTIES, type.prototype as object)
          ? (type as Type<unknown>)
          : undefined;
      return [name, nested];
    }),
  );
}

/** The record a field's shape holds, directly or as a list's items. */
function recordOf(shape: Shape<unknown>): AnyRecord | undefined {
  const inner = 'item' in shape ? (shape as ListShape<unknown>).item : shape;
  return 'fields' in inner ? (inner as AnyRecord) : undefined;
}

/** Every disagreement between a shape and a DTO, as `path: what`. */
function disagreements(shape: AnyRecord, dto: Type<unknown>, path: string, kind = ''): string[] {
  const docs = documented(dto);
  const accepted = new Set([
    ...Object.entries(shape.fields).flatMap(([name, spec]) => [name, ...(spec.aliases ?? [])]),
    ...shape.ignored,
  ]);
  const found: string[] = [];
  for (const name of docs.keys()) {
    if (!accepted.has(name)) found.push(`${path}${name}: documented, refused by the shape`);
  }
  for (const [name, spec] of Object.entries(shape.fields)) {
    if (!docs.has(name)) {
      if (IMPORT_ONLY.has(`${kind}:${path}${name}`)) continue;
      found.push(`${path}${name}: read by the shape, not documented`);
      continue;
    }
    const nestedShape = recordOf(spec.shape);
    const nestedDto = docs.get(name);
    if (nestedShape && nestedDto) {
      found.push(...disagreements(nestedShape, nestedDto, `${path}${name}.`, kind));
    } else if (nestedShape || nestedDto) {
      found.push(`${path}${name}: a record in only one of the two`);
    }
  }
  return found;
}

describe('import documents: the shapes and the documented records name the same fields', () => {
  it.each(IMPORT_KINDS)('%s', (kind) => {
    expect(disagreements(ITEM_SHAPES[kind] as AnyRecord, IMPORT_RECORDS[kind], '', kind)).toEqual(
      [],
    );
  });

  it('notices a field the shape reads and the record does not document', () => {
    const shape = ITEM_SHAPES.partners as AnyRecord;
    const widened = { ...shape, fields: { ...shape.fields, new_column: shape.fields.name } };
    expect(disagreements(widened, IMPORT_RECORDS.partners, '')).toEqual([
      'new_column: read by the shape, not documented',
    ]);
  });
});
