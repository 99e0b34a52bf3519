import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { getMetadataArgsStorage } from 'typeorm';
import { datasetShape } from '../catalog-imports/import-shapes';
import { Dataset } from './dataset.entity';
import { DatasetRecord } from './datasets.dto';

/**
 * A dataset column is read and written in six places: the entity, a migration, the export SQL,
 * the export DTO, the import shape and the importer. Rather than one declaration they would all
 * derive from (a redesign of each), this fails when one of them forgets a column the others
 * have (docs/decisions/dataset-columns-checked-together.md). The DTO and the shape are also held
 * to each other at every depth by catalog-imports/import-documents.spec.ts.
 */

const read = (path: string) => readFileSync(join(__dirname, '..', path), 'utf8');
const MIGRATIONS = readdirSync(join(__dirname, '../database/migrations'))
  .filter((name) => /^\d+-.+\.ts$/.test(name))
  .map((name) => read(`database/migrations/${name}`))
  .join('\n');
const EXPORT_SQL = read('datasets/dataset-exports.sql.ts');
// Accessions are written for every tracked record by the shared upsert.
const IMPORTER =
  read('catalog-imports/datasets.importer.ts') + read('catalog-imports/import-rows.repository.ts');

/**
 * Bookkeeping columns, and this catalog's own publishing settings (the EJP RD Virtual Platform
 * flag of the FAIR Data Point, set through the admin API): neither exported nor imported, since
 * the DAISY export's shape has no place for them.
 */
const BOOKKEEPING = ['id', 'created_at', 'updated_at', 'vp_discoverable'];
/** Exported keys that are not columns of `datasets` (collections, the project's accession). */
const NOT_COLUMNS = [
  'project_external_id',
  'data_declarations',
  'legal_bases',
  'storages',
  'transfers',
  'contacts',
];

/** Database names of the columns of `datasets`, its own and inherited, and its foreign keys. */
function datasetColumns(): string[] {
  const storage = getMetadataArgsStorage();
  const targets = new Set<unknown>();
  for (let t: unknown = Dataset; t && t !== Function.prototype; t = Object.getPrototypeOf(t)) {
    targets.add(t);
  }
  const columns = storage.columns
    .filter((c) => targets.has(c.target))
    .map((c) => c.options.name ?? c.propertyName);
  const joins = storage.joinColumns
    .filter((j) => targets.has(j.target))
    .flatMap((j) => (j.name ? [j.name] : []));
  return [...columns, ...joins].filter((name) => !BOOKKEEPING.includes(name)).sort();
}

/** The keys of the export record that a dataset's own row holds (exposure fields are not). */
function exportedKeys(): string[] {
  const names = (Reflect.getMetadata('swagger/apiModelPropertiesArray', DatasetRecord.prototype) ??
    []) as string[];
  const exposure = new Set(datasetShape.ignored);
  return names.map((n) => n.replace(/^:/, '')).filter((n) => !exposure.has(n));
}

describe('a dataset column is in all six places', () => {
  const columns = datasetColumns();
  const keys = exportedKeys();

  it('finds the entity columns and the export keys', () => {
    expect(columns).toEqual(expect.arrayContaining(['title', 'elu_uuid', 'project_id']));
    expect(keys).toEqual(expect.arrayContaining(['name', 'elu_uuid', 'contacts']));
  });

  it.each(datasetColumns())('column %s: created by a migration, exported, imported', (column) => {
    expect({ column, migration: MIGRATIONS.includes(`"${column}"`) }).toEqual({
      column,
      migration: true,
    });
    expect({ column, exportSql: new RegExp(`\\bd\\.${column}\\b`).test(EXPORT_SQL) }).toEqual({
      column,
      exportSql: true,
    });
    expect({ column, importer: new RegExp(`\\b${column}\\b`).test(IMPORTER) }).toEqual({
      column,
      importer: true,
    });
  });

  it.each(exportedKeys())('export key %s: written by the export SQL, read by the import', (key) => {
    expect({ key, exportSql: new RegExp(`(AS|\\.)\\s*${key}\\b`).test(EXPORT_SQL) }).toEqual({
      key,
      exportSql: true,
    });
    expect({ key, shape: key in datasetShape.fields }).toEqual({ key, shape: true });
    expect({ key, importer: new RegExp(`\\bd\\.${key}\\b`).test(IMPORTER) }).toEqual({
      key,
      importer: true,
    });
  });

  it('has no export key that is neither a column nor a known collection', () => {
    const unknown = keys.filter(
      (key) =>
        !columns.includes(key) &&
        !NOT_COLUMNS.includes(key) &&
        // Renamed on export: the accession and the title.
        !['external_id', 'name', 'project'].includes(key),
    );
    expect(unknown).toEqual([]);
  });
});
