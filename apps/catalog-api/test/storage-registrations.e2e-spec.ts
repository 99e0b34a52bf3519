import { randomInt } from 'node:crypto';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { generateApiKey, hashApiKey } from '@app/auth';
import { createCatalogDatabase } from '../../../test/support/databases';
import { listRoutes } from '../../../test/robustness/support/routes';
import { buildTypeOrmOptions } from '../src/typeorm-options';
import { DemoCatalog, KEYS, startDemoCatalog } from './demo-catalog.fixture';
import { eluValidatorFor } from './support/elu-schemas';

/** The provisioner's key: the catalog is configured with its SHA-256 only. */
const REGISTRATION_KEY = generateApiKey(48);

interface DatasetExport {
  name: string;
  external_id: string;
  project: string | null;
  storages: { platform: string; location: string; accesses: string[] }[];
  transfers: { partner: string; transfer_details: string; transfer_date: string }[];
}

const body = (importId: string, title: string, extra: Record<string, unknown> = {}) => ({
  import_id: importId,
  dataset: { title, project: 'PD-OMICS' },
  storage: { platform: 'lcsb-storage', location: `projects/PD-OMICS/SUB-1/data/raw/${importId}` },
  transfer: { partner: 'LCSB', source: 'dropzone', submission: 'SUB-1', date: '2026-11-20' },
  ...extra,
});

describe('POST /api/registrations (storage copies registered by the provisioner)', () => {
  let c: DemoCatalog;
  const register = (payload: unknown, key = REGISTRATION_KEY) =>
    request(c.server)
      .post('/api/registrations')
      .set('X-API-Key', key)
      .send(payload as object);
  const exported = async (title: string): Promise<DatasetExport | undefined> => {
    await c.versionSettled();
    const res = await c.get('/api/datasets', 'global').expect(200);
    return (res.body.items as DatasetExport[]).find((d) => d.name === title);
  };
  const count = async (sql: string, params: unknown[]) =>
    Number((await c.dataSource.query<{ n: string }[]>(sql, params))[0].n);

  beforeAll(async () => {
    c = await startDemoCatalog({
      REGISTRATION_API_KEY_SHA256: hashApiKey(REGISTRATION_KEY),
      DCAT_PUBLISHER_NAME: 'Luxembourg Centre for Systems Biomedicine',
    });
  });
  afterAll(() => c.close());

  it('creates the dataset in the project (unpublished, schema-valid) with its copy and transfer', async () => {
    const res = await register(body('dropzone-dataset-DS-1', 'Registered reads')).expect(200);
    expect(res.body).toEqual({
      status: 'Success',
      accession: expect.stringMatching(/^ELU_I_\d+$/),
      dataset_created: true,
      storage_created: true,
      transfer_created: true,
    });
    const record = await exported('Registered reads');
    expect(record).toMatchObject({
      external_id: res.body.accession,
      project: 'PD-OMICS',
      storages: [
        {
          platform: 'lcsb-storage',
          location: 'projects/PD-OMICS/SUB-1/data/raw/dropzone-dataset-DS-1',
          accesses: [],
        },
      ],
      transfers: [
        {
          partner: 'Luxembourg Centre for Systems Biomedicine',
          transfer_details: 'source dropzone, submission SUB-1, import dropzone-dataset-DS-1',
          transfer_date: '2026-11-20',
        },
      ],
    });
    const validate = eluValidatorFor('elu-dataset.json');
    expect(validate(record)).toBe(true);
    // Unpublished: no endpoint sees it.
    const seen = await c.get('/api/datasets', 'catalogEndpoint').expect(200);
    expect((seen.body.items as DatasetExport[]).map((d) => d.name)).not.toContain(
      'Registered reads',
    );
  });

  it('is idempotent, also under concurrent calls: one storage row, one transfer', async () => {
    const payload = body('dropzone-dataset-DS-2', 'Concurrent reads');
    const answers = await Promise.all([1, 2, 3, 4, 5].map(() => register(payload)));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    expect(answers.filter((a) => a.body.dataset_created === true)).toHaveLength(1);
    expect(answers.filter((a) => a.body.storage_created === true)).toHaveLength(1);
    expect(answers.filter((a) => a.body.transfer_created === true)).toHaveLength(1);
    const again = await register(payload).expect(200);
    expect(again.body).toMatchObject({ storage_created: false, transfer_created: false });
    const record = await exported('Concurrent reads');
    expect(record?.storages).toHaveLength(1);
    expect(record?.transfers).toHaveLength(1);
  });

  it('adds to the dataset an accession names, touching nothing else of it', async () => {
    const accession = await c.accession('PD-OMICS imaging');
    const before = await exported('PD-OMICS imaging');
    await register({
      import_id: 'dss-dataset-METAB-1',
      dataset: { accession, title: 'ignored when an accession is given', project: 'PD-OMICS' },
      storage: { platform: 'lcsb-storage', location: 'projects/PD-OMICS/S/data/raw/METAB-1' },
    }).expect(200);
    const after = await exported('PD-OMICS imaging');
    expect(after).toEqual({
      ...before,
      storages: [
        ...before!.storages,
        {
          platform: 'lcsb-storage',
          location: 'projects/PD-OMICS/S/data/raw/METAB-1',
          accesses: [],
        },
      ],
    });
  });

  it.each([
    [{ project: 'NO-SUCH-PROJECT' }, 404, 'unknown_project'],
    [{ accession: 'ELU_I_999999' }, 404, 'unknown_dataset'],
  ])('refuses %j with %i (%s) and writes nothing', async (dataset, status, reason) => {
    const audited = await count('SELECT count(*) AS n FROM audit_log', []);
    const payload = body('dropzone-dataset-DS-9', 'Never written');
    const res = await register({ ...payload, dataset: { ...payload.dataset, ...dataset } });
    expect(res.status).toBe(status);
    expect(res.body.more.reason).toBe(reason);
    expect(
      await count('SELECT count(*) AS n FROM datasets WHERE title = $1', ['Never written']),
    ).toBe(0);
    expect(await count('SELECT count(*) AS n FROM audit_log', [])).toBe(audited);
  });

  it('refuses an unknown partner (404) and a title another project uses (409)', async () => {
    const unknownPartner = body('dropzone-dataset-DS-10', 'Partner unknown');
    unknownPartner.transfer.partner = 'Nobody Institute';
    const partner = await register(unknownPartner).expect(404);
    expect(partner.body.more.reason).toBe('unknown_partner');
    const elsewhere = await register({
      ...body('dropzone-dataset-DS-11', 'Registered reads'),
      dataset: { title: 'Registered reads', project: 'IRON-DEF' },
    }).expect(409);
    expect(elsewhere.body.more.reason).toBe('title_in_other_project');
  });

  it('refuses an accession of another project or of none (409), writing nothing', async () => {
    // A depositor of PD-OMICS names an EPIC-DREM dataset's accession in its dataset.json.
    const elsewhere = await c.accession('EPIC-DREM sequencing data');
    await request(c.server)
      .post('/api/datasets')
      .set('X-API-Key', KEYS.global)
      .send({ items: [{ name: 'Of no project' }] })
      .expect(200);
    const projectless = await c.accession('Of no project');
    const copies = () => count('SELECT count(*) AS n FROM storage_locations', []);
    const state = async () => ({
      copies: await copies(),
      transfers: await count('SELECT count(*) AS n FROM transfers', []),
      audited: await count('SELECT count(*) AS n FROM audit_log', []),
      version: (await c.dataSource.query('SELECT version FROM catalog_version'))[0].version,
    });
    const before = await state();
    for (const accession of [elsewhere, projectless]) {
      const payload = body('dropzone-dataset-DS-STEAL', 'Ignored title');
      const res = await register({ ...payload, dataset: { ...payload.dataset, accession } });
      expect(res.status).toBe(409);
      expect(res.body).toEqual({
        status: 'Error',
        description: `Dataset ${accession} does not belong to project PD-OMICS`,
        more: { reason: 'accession_in_other_project', accession },
      });
    }
    expect(await state()).toEqual(before);
    const record = await exported('EPIC-DREM sequencing data');
    expect(record!.storages.map((s) => s.location)).not.toContain(
      'projects/PD-OMICS/SUB-1/data/raw/dropzone-dataset-DS-STEAL',
    );
    // The same accession with its own project registers.
    const own = body('dropzone-dataset-DS-OWN', 'Ignored title');
    await register({
      ...own,
      dataset: { accession: elsewhere, title: 'Ignored title', project: 'EPIC-DREM' },
    }).expect(200);
  });

  it('validates the body like every write (400 listing the problems)', async () => {
    const res = await register({
      import_id: '',
      dataset: { title: 'x' },
      storage: { platform: 'p', location: 'l', extra: 1 },
      transfer: { partner: 'LCSB', source: 's', submission: 's', date: '2026-13-45' },
    }).expect(400);
    // Body problems are named by `field` (docs/decisions/route-input-as-dtos.md).
    const fields = (res.body.more.errors as { field: string }[]).map((e) => e.field);
    expect(fields).toEqual(
      expect.arrayContaining(['import_id', 'dataset.project', 'storage.extra', 'transfer.date']),
    );
  });

  it("keeps the copy's bytes and manifest checksum; a re-registration updates them, one without them keeps them", async () => {
    const digest = (c: string) => c.repeat(64);
    const stored = () =>
      c.dataSource.query<{ byte_size: string | null; manifest_sha256: string | null }[]>(
        `SELECT byte_size, manifest_sha256 FROM storage_locations WHERE location = $1`,
        ['projects/PD-OMICS/SUB-1/data/raw/dropzone-dataset-DS-20'],
      );
    const sized = (bytes: number, sha: string) => {
      const payload = body('dropzone-dataset-DS-20', 'Sized reads');
      return { ...payload, storage: { ...payload.storage, bytes, manifest_sha256: sha } };
    };
    const first = await register(sized(Number.MAX_SAFE_INTEGER, digest('a'))).expect(200);
    expect(first.body).toMatchObject({ storage_created: true });
    expect(await stored()).toEqual([
      { byte_size: String(Number.MAX_SAFE_INTEGER), manifest_sha256: digest('a') },
    ]);
    const audited = () =>
      count(`SELECT count(*) AS n FROM audit_log WHERE action = 'register_storage'`, []);
    const before = await audited();
    // The same again: nothing written, nothing audited.
    await register(sized(Number.MAX_SAFE_INTEGER, digest('a'))).expect(200);
    expect(await audited()).toBe(before);
    // New values (a re-import of the copy): updated, audited, still one row.
    const again = await register(sized(0, digest('b'))).expect(200);
    expect(again.body).toMatchObject({ storage_created: false, transfer_created: false });
    expect(await stored()).toEqual([{ byte_size: '0', manifest_sha256: digest('b') }]);
    expect(await audited()).toBe(before + 1);
    // An older provisioner sends neither: what is known stays.
    await register(body('dropzone-dataset-DS-20', 'Sized reads')).expect(200);
    expect(await stored()).toEqual([{ byte_size: '0', manifest_sha256: digest('b') }]);
    const dcat = await c.get(`/api/dcat/datasets/${first.body.accession}`, 'global').expect(200);
    expect(dcat.text).toContain('dcat:byteSize "0"^^xsd:nonNegativeInteger');
    expect(dcat.text).toContain(`spdx:checksumValue "${digest('b')}"^^xsd:hexBinary`);
    // A catalog import document (no sizes in DAISY's shape) listing the copy again keeps them.
    await request(c.server)
      .post('/api/datasets')
      .set('X-API-Key', KEYS.global)
      .send({
        items: [
          {
            name: 'Sized reads',
            project: 'PD-OMICS',
            storages: [
              {
                platform: 'lcsb-storage',
                location: 'projects/PD-OMICS/SUB-1/data/raw/dropzone-dataset-DS-20',
              },
              { platform: 'tape', location: 'vault/20' },
            ],
          },
        ],
      })
      .expect(200);
    expect(await stored()).toEqual([{ byte_size: '0', manifest_sha256: digest('b') }]);
    const copies = await c.dataSource.query<{ platform: string; byte_size: string | null }[]>(
      `SELECT platform, byte_size FROM storage_locations s JOIN datasets d ON d.id = s.dataset_id
       WHERE d.title = 'Sized reads' ORDER BY platform`,
    );
    expect(copies).toEqual([
      { platform: 'lcsb-storage', byte_size: '0' },
      { platform: 'tape', byte_size: null },
    ]);
  });

  it.each([
    [{ bytes: -1 }, 'storage.bytes'],
    [{ bytes: 1.5 }, 'storage.bytes'],
    [{ bytes: Number.MAX_SAFE_INTEGER + 1 }, 'storage.bytes'],
    [{ bytes: '12' }, 'storage.bytes'],
    [{ manifest_sha256: 'A'.repeat(64) }, 'storage.manifest_sha256'],
    [{ manifest_sha256: 'a'.repeat(63) }, 'storage.manifest_sha256'],
    [{ manifest_sha256: 'g'.repeat(64) }, 'storage.manifest_sha256'],
  ])('refuses a copy with %j in the error envelope (400 naming %s)', async (extra, field) => {
    const payload = body('dropzone-dataset-DS-21', 'Badly sized');
    const res = await register({ ...payload, storage: { ...payload.storage, ...extra } }).expect(
      400,
    );
    const errors = res.body.more.errors as { field: string; message: string }[];
    expect(errors.map((e) => e.field)).toEqual([field]);
    expect(
      await count('SELECT count(*) AS n FROM datasets WHERE title = $1', ['Badly sized']),
    ).toBe(0);
  });

  describe('locations up to 4,000 characters, of any UTF-8 (the unique index holds their digest)', () => {
    // Random characters: a btree entry is compressed first, so repeated ones would fit anyway.
    const randomText = (length: number, from: number, span: number) =>
      Array.from({ length }, () => String.fromCodePoint(from + randomInt(span))).join('');
    const kinds: [string, number, number][] = [
      ['1-byte', 0x21, 0x5e], // 4,000 bytes
      ['2-byte', 0x400, 0x100], // 8,000 bytes (Cyrillic)
      ['3-byte', 0x4e00, 0x5000], // 12,000 bytes (CJK)
      ['4-byte', 0x1f300, 0x300], // 16,000 bytes (emoji: two UTF-16 units, one character)
    ];
    const copiesAt = (location: string) =>
      count('SELECT count(*) AS n FROM storage_locations WHERE location = $1', [location]);

    it.each(kinds)(
      'registers %s characters once, and a location differing in its last one beside it',
      async (kind, from, span) => {
        const location = `projects/PD-OMICS/SUB-1/data/raw/${randomText(3967, from, span)}`;
        expect([...location]).toHaveLength(4000);
        const other = [...location].slice(0, -1).join('') + (location.endsWith('!') ? '"' : '!');
        const payload = (at: string) => {
          const p = body(`dropzone-dataset-long-${kind}`, `Long location ${kind}`);
          return { ...p, storage: { ...p.storage, location: at } };
        };
        const first = await register(payload(location)).expect(200);
        expect(first.body).toMatchObject({ storage_created: true });
        const again = await register(payload(location)).expect(200);
        expect(again.body).toMatchObject({ storage_created: false });
        const beside = await register(payload(other)).expect(200);
        expect(beside.body).toMatchObject({ storage_created: true });
        expect([await copiesAt(location), await copiesAt(other)]).toEqual([1, 1]);
        const record = await exported(`Long location ${kind}`);
        expect(record!.storages.map((s) => s.location).sort()).toEqual([location, other].sort());
      },
    );

    it('refuses 4,001 characters (400 naming storage.location), writing nothing', async () => {
      const payload = body('dropzone-dataset-too-long', 'Location too long');
      const location = randomText(4001, 0x1f300, 0x300);
      const res = await register({ ...payload, storage: { ...payload.storage, location } }).expect(
        400,
      );
      expect((res.body.more.errors as { field: string }[]).map((e) => e.field)).toEqual([
        'storage.location',
      ]);
      expect(await copiesAt(location)).toBe(0);
    });

    it('an import document stores long locations too, each once', async () => {
      const location = randomText(4000, 0x4e00, 0x5000);
      const copy = { platform: 'tape', location };
      await request(c.server)
        .post('/api/datasets')
        .set('X-API-Key', KEYS.global)
        .send({ items: [{ name: 'Long location document', storages: [copy, copy] }] })
        .expect(200);
      expect(await copiesAt(location)).toBe(1);
      expect((await exported('Long location document'))?.storages).toEqual([
        { ...copy, accesses: [] },
      ]);
    });
  });

  it('an import document listing a copy twice stores it once, with the accesses of both', async () => {
    const storage = { platform: 'lcsb-storage', location: 'shared/twice' };
    await request(c.server)
      .post('/api/datasets')
      .set('X-API-Key', KEYS.global)
      .send({
        items: [
          {
            name: 'Listed twice',
            project: 'PD-OMICS',
            storages: [
              { ...storage, accesses: ['group A'] },
              { ...storage, accesses: ['group B'] },
            ],
          },
        ],
      })
      .expect(200);
    expect((await exported('Listed twice'))?.storages).toEqual([
      { ...storage, accesses: ['group A', 'group B'] },
    ]);
  });

  it('audits what a registration changed, never the key', async () => {
    const rows = await c.dataSource.query<{ actor_kind: string; change: object }[]>(
      `SELECT actor_kind, change FROM audit_log WHERE action = 'register_storage' ORDER BY id`,
    );
    expect(rows.length).toBeGreaterThanOrEqual(3);
    expect(rows[0].actor_kind).toBe('registrar');
    expect(JSON.stringify(rows)).not.toContain(REGISTRATION_KEY);
  });

  it('the global key may register too; other keys may not', async () => {
    await register(body('dropzone-dataset-DS-12', 'Registered by an admin'), KEYS.global).expect(
      200,
    );
    for (const key of [KEYS.steward, KEYS.catalogEndpoint]) {
      await register(body('dropzone-dataset-DS-13', 'Never by others'), key).expect(403);
    }
  });

  it('the registration key is refused on every other route, reads of protected data included', async () => {
    // Open to anyone (no key is read): public data, the API docs, REMS's IP-gated webhook, the
    // GA4GH visa keys, the DCAT JSON-LD context.
    const publicRoutes = [
      '/api/cohorts',
      '/api/termsearch/:category',
      '/api/accessreq',
      '/api/docs',
      '/api/jwk',
      '/api/dcat/context.jsonld',
    ];
    const routes = listRoutes(c.app).filter(
      (r) =>
        r.path.startsWith('/api/') &&
        // The registration scope's two routes: copies, and events for the audit trail.
        !['/api/registrations', '/api/trail/events'].includes(r.path) &&
        !publicRoutes.some((p) => r.path.startsWith(p)),
    );
    expect(routes.length).toBeGreaterThan(20);
    for (const route of routes) {
      const path = route.path.replace(/:[A-Za-z_]+/g, '1');
      const call = request(c.server)[route.method.toLowerCase() as 'get'];
      const res = await call(path)
        .set('X-API-Key', REGISTRATION_KEY)
        .send(route.method === 'GET' || route.method === 'HEAD' ? undefined : {});
      expect({ route, status: res.status }).toEqual({ route, status: 403 });
    }
    // The query-string form of the key is refused the same way.
    await request(c.server).get('/api/datasets').query({ API_KEY: REGISTRATION_KEY }).expect(403);
  });
});

describe('migration StorageLocationDigest', () => {
  const MIGRATION = 'StorageLocationDigest1796000000000';
  let dataSource: DataSource;
  const indexes = async () =>
    (
      await dataSource.query<{ name: string }[]>(
        `SELECT c.relname AS name FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
         WHERE i.indrelid = 'storage_locations'::regclass AND i.indisunique AND NOT i.indisprimary`,
      )
    ).map((i) => i.name);

  beforeAll(async () => {
    dataSource = new DataSource(
      buildTypeOrmOptions({ DATABASE_URL: await createCatalogDatabase(), DATABASE_POOL_SIZE: 2 }),
    );
    await dataSource.initialize();
    await undoThrough(MIGRATION);
  });
  /** Later migrations go down first, as in a real rollback to before `name`. */
  const undoThrough = async (name: string) => {
    for (;;) {
      const [last] = await dataSource.query<{ name: string }[]>(
        'SELECT name FROM migrations ORDER BY id DESC LIMIT 1',
      );
      await dataSource.undoLastMigration();
      if (last.name === name) break;
    }
  };
  afterAll(() => dataSource?.destroy());

  it('keeps one row per copy across the change of index, and goes down and up again', async () => {
    expect(await indexes()).toEqual(['UQ_storage_locations_dataset_platform_location']);
    const [{ id }] = await dataSource.query<{ id: number }[]>(
      `INSERT INTO datasets (title) VALUES ('Copied') RETURNING id`,
    );
    const copy = (location: string | null) =>
      dataSource.query(
        `INSERT INTO storage_locations (dataset_id, platform, location) VALUES ($1, 'hpc', $2)`,
        [id, location],
      );
    await copy('projects/P/S/data/raw/one');
    await copy(null);
    await dataSource.runMigrations({ transaction: 'each' });
    expect(await indexes()).toEqual(['UQ_storage_locations_dataset_platform_location_digest']);
    // The rows from before are still one each: the same copy again is a unique violation,
    // a null location counting as '' as before.
    for (const location of ['projects/P/S/data/raw/one', null, ''])
      await expect(copy(location)).rejects.toMatchObject({ code: '23505' });
    await undoThrough(MIGRATION);
    expect(await indexes()).toEqual(['UQ_storage_locations_dataset_platform_location']);
    await dataSource.runMigrations({ transaction: 'each' });
    expect(await indexes()).toEqual(['UQ_storage_locations_dataset_platform_location_digest']);
  });
});
