import type { QueryRunner } from 'typeorm';
import { CATALOG_SETTINGS, CatalogSettings } from '../src/config/catalog.settings';
import { DatasetExportsRefresher } from '../src/datasets/dataset-exports-refresher';
import { DatasetsRepository, ExportPage } from '../src/datasets/datasets.repository';
import type { Viewer } from '../src/auth/viewer';
import { metricSample } from '../../../test/support/prometheus-text';
import { DemoCatalog, startDemoCatalog } from './demo-catalog.fixture';

/**
 * Stored dataset exports (migration StoredDatasetExports): a read copies the stored export of a
 * dataset only while it is right in the read's snapshot. Whatever is written, the list is the
 * one rendered from the data at that moment.
 */
describe('stored dataset exports', () => {
  let c: DemoCatalog;
  let datasets: DatasetsRepository;
  let refresher: DatasetExportsRefresher;
  let source: string;
  const global: Viewer = { kind: 'global' };

  /** Every page of a read in one REPEATABLE READ transaction on `runner`, which stays open. */
  async function readOn(runner: QueryRunner, viewer: Viewer, from = source): Promise<ExportPage> {
    const items: string[] = [];
    let rendered = 0;
    for await (const page of datasets.findExportPages(runner.manager, viewer, {}, from, 1000)) {
      items.push(...page.items);
      rendered += page.rendered;
    }
    return { items, rendered };
  }

  /** A read as the catalog does it (of a replica whose source is `from`), stored exports used where right. */
  async function read(viewer: Viewer = global, from = source): Promise<ExportPage> {
    const runner = c.dataSource.createQueryRunner();
    await runner.startTransaction('REPEATABLE READ');
    try {
      return await readOn(runner, viewer, from);
    } finally {
      await runner.rollbackTransaction();
      await runner.release();
    }
  }

  /** The same read with no stored export at all: every export rendered from the data. */
  async function rendered(viewer: Viewer = global): Promise<string[]> {
    const runner = c.dataSource.createQueryRunner();
    await runner.startTransaction('REPEATABLE READ');
    try {
      await runner.query('DELETE FROM dataset_exports');
      return (await readOn(runner, viewer)).items;
    } finally {
      await runner.rollbackTransaction();
      await runner.release();
    }
  }

  /** Stores every export and checks that a read then renders none. */
  async function refreshAll(): Promise<void> {
    refresher.schedule();
    await refresher.settled();
    expect((await read()).rendered).toBe(0);
  }

  const storedCount = async () =>
    Number((await c.dataSource.query('SELECT count(*) AS n FROM dataset_exports'))[0].n);

  beforeAll(async () => {
    c = await startDemoCatalog();
    datasets = c.app.get(DatasetsRepository);
    refresher = c.app.get(DatasetExportsRefresher);
    source = c.app.get<CatalogSettings>(CATALOG_SETTINGS).source;
  });
  afterAll(() => c.close());

  it('a read renders what is not stored and starts the refresh; then it copies the same bytes', async () => {
    await refresher.settled();
    await c.dataSource.query('DELETE FROM dataset_exports');
    const before = await read();
    const total = before.items.length;
    expect(total).toBeGreaterThan(5);
    expect(before.rendered).toBe(total);
    // Through the HTTP route: the read asks for the refresh, which stores every export.
    const answer = await c.get('/api/datasets', 'global').expect(200);
    await refresher.settled();
    expect(await storedCount()).toBe(total);
    const after = await read();
    expect(after.rendered).toBe(0);
    expect(after.items).toEqual(before.items);
    expect((answer.body as { items: unknown[] }).items).toEqual(
      after.items.map((item) => JSON.parse(item) as unknown),
    );
    // What an operator (and the bench) sees of it.
    const metrics = (await c.get('/metrics').expect(200)).text;
    expect(metricSample(metrics, 'catalog_dataset_exports_stored_total', {})).toBe(total);
    expect(metricSample(metrics, 'catalog_dataset_exports_refreshing', {})).toBe(0);
  });

  it('an endpoint viewer gets its exposure fields after a stored export, as after a rendered one', async () => {
    const [{ id }] = await c.dataSource.query<{ id: number }[]>(
      `SELECT id FROM endpoints WHERE name = 'ELIXIR Luxembourg Data Catalog'`,
    );
    const viewer: Viewer = { kind: 'endpoint', endpointId: id };
    await refreshAll();
    const stored = await read(viewer);
    expect(stored.items.length).toBeGreaterThan(0);
    expect(stored.items.every((item) => item.includes('"form_id":'))).toBe(true);
    expect(stored.items).toEqual(await rendered(viewer));
  });

  // Each write changes something one or more exports show, through each table an export reads
  // (in an order that keeps rows for the later ones). The read after it must show the change.
  it.each<[string, string]>([
    [
      'datasets',
      `UPDATE datasets SET title = title || ' (renamed)' WHERE id = (SELECT min(id) FROM datasets)`,
    ],
    [
      'projects',
      `UPDATE projects SET acronym = acronym || '-X'
       WHERE id = (SELECT min(project_id) FROM datasets)`,
    ],
    [
      'data_declarations',
      `UPDATE data_declarations SET title = title || ' (renamed)' WHERE id = (SELECT min(id) FROM data_declarations)`,
    ],
    [
      'cohorts',
      `UPDATE cohorts SET name = name || ' (renamed)' WHERE id IN (SELECT cohort_id FROM data_declaration_cohorts)`,
    ],
    [
      'data_declaration_cohorts',
      `DELETE FROM data_declaration_cohorts
       WHERE data_declaration_id = (SELECT min(data_declaration_id) FROM data_declaration_cohorts)`,
    ],
    [
      'use_conditions',
      `UPDATE use_conditions SET use_class_note = 'changed' WHERE id = (SELECT min(id) FROM use_conditions)`,
    ],
    [
      'legal_bases',
      `UPDATE legal_bases SET legal_basis_notes = 'changed' WHERE id = (SELECT min(id) FROM legal_bases)`,
    ],
    [
      'legal_basis_data_declarations',
      `DELETE FROM legal_basis_data_declarations
       WHERE legal_basis_id = (SELECT min(legal_basis_id) FROM legal_basis_data_declarations)`,
    ],
    [
      'storage_locations',
      `UPDATE storage_locations SET location = 'changed' WHERE id = (SELECT min(id) FROM storage_locations)`,
    ],
    [
      'accesses',
      `UPDATE accesses SET access_notes = 'changed notes'
       WHERE id = (SELECT min(access_id) FROM access_storage_locations)`,
    ],
    [
      'access_storage_locations',
      `DELETE FROM access_storage_locations WHERE access_id = (SELECT min(access_id) FROM access_storage_locations)`,
    ],
    [
      'transfers',
      `UPDATE transfers SET transfer_details = 'changed' WHERE id = (SELECT min(id) FROM transfers)`,
    ],
    [
      'partners (of a transfer)',
      `UPDATE partners SET name = name || ' (renamed)' WHERE id = (SELECT min(partner_id) FROM transfers)`,
    ],
    [
      'partners (a custodian’s affiliation)',
      `UPDATE partners SET name = name || ' (renamed again)' WHERE id = (SELECT min(u.affiliation_id)
         FROM users u JOIN dataset_local_custodians x ON x.user_id = u.id)`,
    ],
    [
      'users',
      `UPDATE users SET last_name = last_name || 'son' WHERE id = (SELECT min(user_id) FROM dataset_local_custodians)`,
    ],
    [
      'dataset_local_custodians',
      `DELETE FROM dataset_local_custodians WHERE dataset_id = (SELECT min(dataset_id) FROM dataset_local_custodians)`,
    ],
    ['datasets (added)', `INSERT INTO datasets (title) VALUES ('Added after the refresh')`],
    ['datasets (deleted)', `DELETE FROM datasets WHERE id = (SELECT max(id) FROM datasets)`],
    ['a truncated table', 'TRUNCATE transfers'],
  ])('a write to %s shows in the next read', async (_table, write) => {
    await refreshAll();
    const before = (await read()).items;
    await c.dataSource.query(write);
    const after = await read();
    expect(after.items).not.toEqual(before);
    expect(after.items).toEqual(await rendered());
  });

  // Columns no export shows: a login, a title used only by filters, timestamps. The version
  // moves (every cached answer is rebuilt), but each stored export is still right.
  it.each<[string, string]>([
    ['users', `UPDATE users SET oidc_id = 'changed-login-' || id, updated_at = now()`],
    ['projects', `UPDATE projects SET title = title || ' (retitled)', updated_at = now()`],
    ['partners', 'UPDATE partners SET is_published = NOT is_published, updated_at = now()'],
    ['cohorts', 'UPDATE cohorts SET updated_at = now()'],
    ['accesses', 'UPDATE accesses SET updated_at = now()'],
  ])('an update of %s that changes nothing an export shows keeps them', async (_table, write) => {
    await refreshAll();
    const before = (await read()).items;
    await c.dataSource.query(write);
    const after = await read();
    expect(after.rendered).toBe(0);
    expect(after.items).toEqual(before);
    expect(after.items).toEqual(await rendered());
  });

  it('an export rendered before a write and stored after it is not used', async () => {
    await refreshAll();
    const [{ id }] = await c.dataSource.query<{ id: number }[]>(
      'SELECT min(id) AS id FROM datasets',
    );
    await c.dataSource.query('DELETE FROM dataset_exports');
    // A refresh whose snapshot was taken before the write (as a statement that started just
    // before it commits), storing after it.
    const late = c.dataSource.createQueryRunner();
    await late.startTransaction('REPEATABLE READ');
    try {
      await late.query('SELECT 1');
      await c.dataSource.query(
        `UPDATE datasets SET title = 'Renamed under a refresh' WHERE id = $1`,
        [id],
      );
      expect(await datasets.storeStaleExports(late.manager, 10_000)).toBeGreaterThan(0);
      await late.commitTransaction();
    } finally {
      await late.release();
    }
    const after = await read();
    expect(after.rendered).toBe(1);
    expect(after.items.some((item) => item.includes('"name":"Renamed under a refresh"'))).toBe(
      true,
    );
    expect(after.items).toEqual(await rendered());
  });

  it('an export of another format is not used, and the refresh renders it again', async () => {
    await refreshAll();
    await c.dataSource.query(
      `UPDATE dataset_exports SET format = 'older code', fields = '"older":true'`,
    );
    const stale = await read();
    expect(stale.rendered).toBe(stale.items.length);
    expect(stale.items).toEqual(await rendered());
    await refreshAll();
  });

  it('replicas with different sources share the stored exports, each with its own source', async () => {
    await refreshAll();
    const ours = await read();
    const other = 'https://other "replica".example';
    const theirs = await read(global, other);
    expect(theirs.rendered).toBe(0);
    const prefix = (of: string) => `{"source":${JSON.stringify(of)},"id_at_source":`;
    expect(ours.items.every((item) => item.startsWith(prefix(source)))).toBe(true);
    expect(theirs.items).toEqual(
      ours.items.map((item) => prefix(other) + item.slice(prefix(source).length)),
    );
  });

  it('a transaction stamps each dataset once, with the version it commits', async () => {
    await refreshAll();
    const runner = c.dataSource.createQueryRunner();
    await runner.startTransaction();
    try {
      await runner.query(
        `UPDATE datasets SET title = title || '.' WHERE id = (SELECT min(id) FROM datasets)`,
      );
      await runner.query(
        `UPDATE datasets SET description = 'twice' WHERE id = (SELECT min(id) FROM datasets)`,
      );
      await runner.commitTransaction();
    } finally {
      await runner.release();
    }
    const [row] = await c.dataSource.query<
      { stamped: string; version: string; versions: string }[]
    >(
      `SELECT c.version AS stamped, (SELECT version FROM catalog_version) AS version,
         (SELECT count(*) FROM dataset_export_changes WHERE version = c.version) AS versions
       FROM dataset_export_changes c WHERE c.dataset_id = (SELECT min(id) FROM datasets)`,
    );
    expect(row).toEqual({ stamped: row.version, version: row.version, versions: '1' });
  });

  it('the refresh forgets the exports of deleted datasets', async () => {
    await refreshAll();
    const [{ id }] = await c.dataSource.query<{ id: number }[]>(
      `INSERT INTO datasets (title) VALUES ('Short-lived') RETURNING id`,
    );
    await refreshAll();
    await c.dataSource.query('DELETE FROM datasets WHERE id = $1', [id]);
    refresher.schedule();
    await refresher.settled();
    const left = await c.dataSource.query(
      `SELECT 1 FROM dataset_exports WHERE dataset_id = $1
       UNION ALL SELECT 1 FROM dataset_export_changes WHERE dataset_id = $1`,
      [id],
    );
    expect(left).toEqual([]);
  });

  it('the migration goes down and up again; reads render meanwhile', async () => {
    // Later migrations go down first, as they would in a real rollback to before this one.
    for (;;) {
      const [last] = await c.dataSource.query<{ name: string }[]>(
        'SELECT name FROM migrations ORDER BY id DESC LIMIT 1',
      );
      await c.dataSource.undoLastMigration();
      if (last.name === 'StoredDatasetExports1795700000000') break;
    }
    const tables = await c.dataSource.query(
      `SELECT 1 FROM pg_tables WHERE tablename IN ('dataset_exports', 'dataset_export_changes')`,
    );
    expect(tables).toEqual([]);
    // Writes still bump the version once the stamps are gone.
    const [{ version }] = await c.dataSource.query<{ version: string }[]>(
      'SELECT version FROM catalog_version',
    );
    await c.dataSource.query(
      `UPDATE datasets SET title = title WHERE id = (SELECT min(id) FROM datasets)`,
    );
    const [{ version: next }] = await c.dataSource.query<{ version: string }[]>(
      'SELECT version FROM catalog_version',
    );
    expect(BigInt(next)).toBe(BigInt(version) + 1n);
    await c.dataSource.runMigrations({ transaction: 'each' });
    await refreshAll();
    expect((await read()).items).toEqual(await rendered());
  });
});
