import { get as httpGet } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { TEST_GLOBAL_KEY } from '../../../test/support/catalog-app';
import { DemoCatalog, KEYS, startDemoCatalog } from './demo-catalog.fixture';
import { DCAT_TEST_ENV, rdfCheck } from './support/dcat-test-env';

/**
 * GET /api/dcat: the catalog as DCAT-AP 3.0.1 with the HealthDCAT-AP profile, checked with
 * shacl-engine (SHACL core and SHACL-SPARQL) against the official shapes in
 * ../shared/reference/dcat/, through test/support/rdf-check.mjs (an ES module, run as a child
 * process). Catalogs: the demo catalog, plus generated datasets with every optional field
 * filled ("FULL") and every one empty ("EMPTY").
 */

const BASE = 'https://catalog.test';
const ENV = { ...DCAT_TEST_ENV, DCAT_PAGE_SIZE: '20' };
const CONTEXT_FILE = join(__dirname, '../src/dcat/dcat-ap-3.0.1.context.json');
const ACCESS_RIGHT = 'http://publications.europa.eu/resource/authority/access-right/';
const GENERATED = 12;
/**
 * A SHACL run (a child process parsing the shapes and 1.8 MB of EU vocabularies, then
 * shacl-engine over the catalog): 10-25 s on a loaded 2-core machine.
 */
const SHACL_MS = 120_000;

interface Violation {
  focusNode: string;
  path: string | null;
  message: string;
  component: string;
}
interface Validation {
  violations: Violation[];
  warnings: number;
  conforms: boolean;
  triples: number;
}

let dir: string;
let fileNo = 0;

/** Runs the checker on `text` with `request`'s other fields. */
function check<T>(text: string, req: Record<string, unknown>): Promise<T> {
  const file = join(dir, `export-${++fileNo}`);
  writeFileSync(file, text);
  return rdfCheck<T>({ ...req, file, context: CONTEXT_FILE });
}

/** Violations by path and constraint, with a count and one focus node each: a short failure message. */
const summary = (violations: Violation[]) => [
  ...new Set(
    violations.map((v) =>
      `${v.path} ${v.component.replace(/.*#/, '')} e.g. ${v.focusNode} ${v.message}`.trim(),
    ),
  ),
];

const validate = (turtle: string, profile: string, extra: Record<string, unknown> = {}) =>
  check<Validation>(turtle, { op: 'validate', profile, ...extra });
const parse = (text: string, format: string) =>
  check<{ triples: string[]; blankNodes: number }>(text, { op: 'parse', format });

/** Datasets with every optional field filled, and datasets with none: GENERATED of each. */
async function addGenerated(c: DemoCatalog): Promise<void> {
  const q = (sql: string, params: unknown[] = []) => c.dataSource.query(sql, params);
  await q(`INSERT INTO partners (name, acronym, country_code, geo_category, sector_category)
    VALUES ('FULL hospital', 'FH', 'LU', 'National', 'PUBLIC')`);
  await q(
    `INSERT INTO projects (acronym, title, description) VALUES ('FULL-P', 'FULL project', 'All fields')`,
  );
  await q(
    `INSERT INTO cohorts (name, description, is_published) VALUES ('FULL cohort', 'A cohort', true)`,
  );
  await q(`INSERT INTO users (username, first_name, last_name, email)
    VALUES ('full.custodian', 'Fay', 'Full', 'fay.full@lcsb.example')`);
  await q(
    `INSERT INTO datasets (title, description, other_external_id, project_id)
     SELECT 'FULL dataset ' || g, 'Every optional field of dataset ' || g, 'EGAD0000' || g,
       (SELECT id FROM projects WHERE acronym = 'FULL-P') FROM generate_series(1, $1) g`,
    [GENERATED],
  );
  await q(
    `INSERT INTO datasets (title) SELECT 'EMPTY dataset ' || g FROM generate_series(1, $1) g`,
    [GENERATED],
  );
  const full = `(SELECT id FROM datasets WHERE title LIKE 'FULL dataset %')`;
  const categories = ['open_access', 'registered_access', 'controlled_access'];
  await q(
    `INSERT INTO data_declarations (dataset_id, title, data_types, data_types_notes, access_category,
       access_procedure, consent_status, has_special_subjects, special_subjects_description,
       embargo_date, storage_end_date, storage_duration_criteria, partner_id, de_identification)
     SELECT d.id, 'declaration ' || k, ARRAY['RNASeq', 'Clinical_data', 'Samples'], 'notes',
       ($1::text[])[1 + (d.id + k) % 3]::access_category, 'Apply to the DAC', 'homogeneous', true,
       'children', DATE '2027-01-01', DATE '2035-12-31', 'ten years',
       (SELECT id FROM partners WHERE name = 'FULL hospital'),
       (ARRAY['pseudonymization', 'anonymization'])[1 + k % 2]::de_identification_method
     FROM ${full} d, generate_series(1, 2) k`,
    [categories],
  );
  await q(`INSERT INTO data_declaration_cohorts (data_declaration_id, cohort_id)
    SELECT dd.id, (SELECT id FROM cohorts WHERE name = 'FULL cohort') FROM data_declarations dd
    WHERE dd.dataset_id IN ${full}`);
  // Every use class and every rule.
  await q(`INSERT INTO use_conditions (data_declaration_id, use_class, use_class_note,
      use_condition_note, use_condition_rule)
    SELECT dd.id, uc, 'class note', 'condition note',
      (enum_range(NULL::use_condition_rule))[1 + (row_number() OVER ()) % 4]
    FROM data_declarations dd, unnest(enum_range(NULL::use_class)) uc
    WHERE dd.dataset_id IN ${full}`);
  await q(`INSERT INTO legal_bases (dataset_id, legal_basis_codes, personal_data_codes, legal_basis_notes)
    SELECT d.id, enum_range(NULL::legal_basis_code), enum_range(NULL::personal_data_code), 'notes'
    FROM ${full} d`);
  // As the provisioner registers them: the copy's bytes and its manifest's SHA-256.
  await q(`INSERT INTO storage_locations (dataset_id, platform, location, byte_size, manifest_sha256)
    SELECT d.id, 'HPC ' || k, '/srv/full/' || d.id || '/' || k, 1000 * d.id + k,
      encode(sha256(convert_to('manifest ' || d.id || '/' || k, 'UTF8')), 'hex')
    FROM ${full} d, generate_series(1, 2) k`);
  // One copy the provisioner serves by DRS; and a controlled (NON_PUBLIC) dataset without a copy.
  await q(`UPDATE storage_locations SET drs_uri = 'drs://drs.catalog.test/P~S~' || dataset_id
    WHERE id = (SELECT min(id) FROM storage_locations WHERE dataset_id IN ${full})`);
  await q(`INSERT INTO datasets (title, description, project_id)
    SELECT 'NOCOPY dataset', 'Controlled, not stored yet', id FROM projects WHERE acronym = 'FULL-P'`);
  await q(`INSERT INTO data_declarations (dataset_id, title, data_types, access_category,
      access_procedure, partner_id)
    SELECT id, 'controlled', ARRAY['RNASeq'], 'controlled_access', 'Apply to the DAC',
      (SELECT id FROM partners WHERE name = 'FULL hospital')
    FROM datasets WHERE title = 'NOCOPY dataset'`);
  await q(`INSERT INTO transfers (dataset_id, partner_id, transfer_details, transfer_date, import_id)
    SELECT d.id, (SELECT id FROM partners WHERE name = 'FULL hospital'), 'import', ('2026-03-0' || k)::date,
      'import-' || d.id || '-' || k FROM ${full} d, generate_series(1, 2) k`);
  await q(`INSERT INTO dataset_local_custodians (dataset_id, user_id)
    SELECT d.id, (SELECT id FROM users WHERE username = 'full.custodian') FROM ${full} d`);
  await c.versionSettled();
}

describe('GET /api/dcat (DCAT-AP 3.0.1, HealthDCAT-AP)', () => {
  let c: DemoCatalog;
  /** The global key's view of the whole catalog (demo + generated), in Turtle. */
  let everything: string;

  const get = (path: string, key?: string) => {
    const req = request(c.server).get(path);
    return key === undefined ? req : req.set('X-API-Key', key);
  };

  /** Every page of the catalog in one format, following hydra:next. */
  async function allPages(key: string | undefined, format = 'ttl'): Promise<string[]> {
    const pages: string[] = [];
    let path: string | undefined = `/api/dcat?format=${format}`;
    while (path !== undefined) {
      const res = await get(path, key).expect(200);
      pages.push(res.text);
      const next = /hydra:next <https:\/\/catalog\.test(\/api\/dcat\?page=\d+)>/.exec(res.text);
      path = next === null ? undefined : `${next[1]}&format=${format}`;
    }
    return pages;
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'dcat-'));
    c = await startDemoCatalog(ENV);
    await addGenerated(c);
    everything = (await allPages(TEST_GLOBAL_KEY)).join('\n');
  }, SHACL_MS);
  afterAll(async () => {
    await c.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves Turtle by default, and JSON-LD and RDF/XML by Accept or ?format', async () => {
    const ttl = await get('/api/dcat').expect(200);
    expect(ttl.headers['content-type']).toBe('text/turtle; charset=utf-8');
    expect(ttl.headers.vary).toContain('Accept');
    const byAccept = await get('/api/dcat').set('Accept', 'application/ld+json').expect(200);
    expect(byAccept.headers['content-type']).toBe('application/ld+json; charset=utf-8');
    const xml = await get('/api/dcat')
      .set('Accept', 'text/html;q=0.9, application/rdf+xml')
      .expect(200);
    expect(xml.headers['content-type']).toBe('application/rdf+xml; charset=utf-8');
    const byFormat = await get('/api/dcat?format=jsonld').set('Accept', 'text/turtle').expect(200);
    expect(byFormat.headers['content-type']).toBe('application/ld+json; charset=utf-8');
    const bad = await get('/api/dcat?format=csv').expect(400);
    expect(bad.body.more.errors[0].parameter).toBe('format');
    await get('/api/dcat?page=0').expect(400);
  });

  it('names every resource under CATALOG_SOURCE, whatever Host the request carries', async () => {
    const res = await get('/api/dcat').set('Host', 'evil.example').expect(200);
    expect(res.text).not.toContain('evil.example');
    expect(res.text).toContain(`<${BASE}/api/dcat>`);
  });

  it(
    'all three serialisations are the same graph (no blank nodes: equal triple sets)',
    async () => {
      const [ttl, jsonld, rdf] = await Promise.all(
        ['ttl', 'jsonld', 'rdf'].map(async (f) =>
          parse((await get(`/api/dcat?format=${f}&page=2`, TEST_GLOBAL_KEY).expect(200)).text, f),
        ),
      );
      expect(ttl.blankNodes + jsonld.blankNodes + rdf.blankNodes).toBe(0);
      expect(ttl.triples.length).toBeGreaterThan(200);
      expect(jsonld.triples).toEqual(ttl.triples);
      expect(rdf.triples).toEqual(ttl.triples);
      // A dataset with every field filled, byte sizes and checksums included.
      const full = await c.accession('FULL dataset 1');
      const [fullTtl, fullJsonld, fullRdf] = await Promise.all(
        ['ttl', 'jsonld', 'rdf'].map(async (f) =>
          parse(
            (await get(`/api/dcat/datasets/${full}?format=${f}`, TEST_GLOBAL_KEY).expect(200)).text,
            f,
          ),
        ),
      );
      const [byteSize, checksumValue] = ['dcat#byteSize', 'terms#checksumValue'].map((p) =>
        fullTtl.triples.filter((t) => t.includes(p)),
      );
      expect(byteSize).toHaveLength(2);
      expect(byteSize[0]).toMatch(
        /"\d+"\^\^<http:\/\/www.w3.org\/2001\/XMLSchema#nonNegativeInteger>/,
      );
      expect(checksumValue).toHaveLength(2);
      expect(checksumValue[0]).toMatch(
        /"[0-9a-f]{64}"\^\^<http:\/\/www.w3.org\/2001\/XMLSchema#hexBinary>/,
      );
      expect(fullJsonld.triples).toEqual(fullTtl.triples);
      expect(fullRdf.triples).toEqual(fullTtl.triples);
    },
    SHACL_MS,
  );

  it('serves a JSON-LD context that is the official DCAT-AP 3.0.1 one without its five Xsd:* terms', async () => {
    const res = await get('/api/dcat/context.jsonld').expect(200);
    const official = JSON.parse(
      readFileSync(
        join(__dirname, '../../../../shared/reference/dcat/dcat-ap-3.0.1/context/dcat-ap.jsonld'),
        'utf8',
      ),
    ) as { '@context': Record<string, unknown> };
    const removed = Object.keys(official['@context']).filter((k) => k.startsWith('Xsd:'));
    expect(removed).toHaveLength(5);
    for (const k of removed) delete official['@context'][k];
    expect(JSON.parse(res.text)).toEqual(official);
    // The removed terms were used nowhere else in the context: the triples it yields are the same.
    expect(JSON.stringify(official)).not.toContain('Xsd:');
  });

  it('pages with Hydra: first/next/last, every visible dataset once, 404 past the last page', async () => {
    const total = await c.dataSource.query<{ n: number }[]>(
      'SELECT count(*)::int AS n FROM datasets',
    );
    const last = Math.ceil(total[0].n / 20);
    const first = await get('/api/dcat', TEST_GLOBAL_KEY).expect(200);
    expect(first.text).toContain(`hydra:last <${BASE}/api/dcat?page=${last}>`);
    expect(first.text).toContain(`hydra:next <${BASE}/api/dcat?page=2>`);
    expect(first.text).toContain(`hydra:totalItems "${total[0].n}"^^xsd:nonNegativeInteger`);
    const datasets = everything.match(/^<[^>]+> *\n +a dcat:Dataset/gm) ?? [];
    expect(datasets).toHaveLength(total[0].n);
    const lastPage = await get(`/api/dcat?page=${last}`, TEST_GLOBAL_KEY).expect(200);
    expect(lastPage.text).not.toContain('hydra:next');
    expect(lastPage.text).toContain(`hydra:previous <${BASE}/api/dcat?page=${last - 1}>`);
    await get(`/api/dcat?page=${last + 1}`, TEST_GLOBAL_KEY).expect(404);
  });

  it(
    'the whole catalog has zero DCAT-AP 3.0.1 violations (demo, every field filled, every field empty)',
    async () => {
      expect(everything).toContain('FULL dataset 1');
      expect(everything).toContain('EMPTY dataset 1');
      expect(everything).toContain(`${ACCESS_RIGHT}NON_PUBLIC`);
      // The FULL copies' registered sizes and checksums, and only theirs.
      const sizes = everything.match(/dcat:byteSize "\d+"\^\^xsd:nonNegativeInteger/g) ?? [];
      const checksums = everything.match(/spdx:checksumValue "[0-9a-f]{64}"\^\^xsd:hexBinary/g);
      expect(sizes).toHaveLength(2 * GENERATED);
      expect(checksums).toHaveLength(2 * GENERATED);
      expect(everything).toContain('spdx:algorithm spdx:checksumAlgorithm_sha256');
      const report = await validate(everything, 'dcat-ap-3.0.1');
      expect(summary(report.violations)).toEqual([]);
      expect(report.triples).toBeGreaterThan(1000);
    },
    SHACL_MS,
  );

  it('points a copy served by DRS at its drs:// URI, and gives a NON_PUBLIC dataset without a copy a distribution saying how access is requested', async () => {
    expect(everything).toMatch(/dcat:accessURL <drs:\/\/drs\.catalog\.test\/P~S~\d+>/);
    const accession = await c.accession('NOCOPY dataset');
    const one = await get(`/api/dcat/datasets/${accession}`, TEST_GLOBAL_KEY).expect(200);
    expect(one.text).toContain(`${ACCESS_RIGHT}NON_PUBLIC`);
    expect(one.text).toContain(`<${BASE}/api/dcat/datasets/${accession}#access-request>`);
    expect(one.text).toContain('dct:title "Access by request"');
  });

  it(
    'its NON_PUBLIC datasets have zero HealthDCAT-AP Release 8 (NON_PUBLIC) violations',
    async () => {
      expect(everything).toContain('NOCOPY dataset');
      const report = await validate(everything, 'healthdcat-ap-r8-non-public', {
        level: 'NON_PUBLIC',
      });
      expect(summary(report.violations)).toEqual([]);
      expect(report.triples).toBeGreaterThan(500);
    },
    SHACL_MS,
  );

  it(
    'the validator fails a broken export: a dataset without title, a distribution without accessURL',
    async () => {
      const accession =
        /datasets\/(ELU_I_\d+)>\n +a dcat:Dataset ;\n +dct:title "FULL dataset 1"/.exec(
          everything,
        )![1];
      const dataset = `${BASE}/api/dcat/datasets/${accession}`;
      // Its title line, and the accessURL line of its first distribution.
      const broken = everything
        .replace('  dct:title "FULL dataset 1" ;\n', '')
        .replace(
          new RegExp(
            `(<${dataset}#storage-\\d+>\\n  a dcat:Distribution ;\\n  dct:title "[^"]*" ;\\n)  dcat:accessURL <[^>]*> ;\\n`,
          ),
          '$1',
        );
      expect(broken.length).toBeLessThan(everything.length - 60);
      const report = await validate(broken, 'dcat-ap-3.0.1');
      const paths = report.violations.map((v) => `${v.focusNode} ${v.path}`);
      expect(paths).toContain(`${dataset} http://purl.org/dc/terms/title`);
      expect(
        paths.some((p) => p.startsWith(`${dataset}#storage-`) && p.endsWith('dcat#accessURL')),
      ).toBe(true);
      // A checksum value that is a plain string, an algorithm that is no spdx:ChecksumAlgorithm.
      const badChecksum = everything
        .replace('"^^xsd:hexBinary', '"')
        .replace(
          'spdx:algorithm spdx:checksumAlgorithm_sha256',
          'spdx:algorithm <http://spdx.org/rdf/terms#checksumAlgorithm_md5>',
        );
      const checksumReport = await validate(badChecksum, 'dcat-ap-3.0.1');
      const checksumPaths = checksumReport.violations
        .filter((v) => v.focusNode.endsWith('-checksum'))
        .map((v) => v.path);
      expect(checksumPaths).toEqual(
        expect.arrayContaining([
          'http://spdx.org/rdf/terms#checksumValue',
          'http://spdx.org/rdf/terms#algorithm',
        ]),
      );
    },
    2 * SHACL_MS, // two SHACL runs
  );

  it(
    'without a key: published datasets only; one dataset by accession, 404 when not visible',
    async () => {
      const published = await c.dataSource.query<{ elu_accession: string }[]>(
        `SELECT elu_accession FROM datasets d WHERE EXISTS (SELECT 1 FROM exposures e
         WHERE e.dataset_id = d.id AND e.deprecated_at IS NULL) ORDER BY d.id`,
      );
      const anonymous = (await allPages(undefined)).join('\n');
      const seen = [
        ...anonymous.matchAll(/^<[^>]+\/datasets\/(ELU_I_\d+)> *\n +a dcat:Dataset/gm),
      ].map((m) => m[1]);
      expect(seen).toEqual(published.map((p) => p.elu_accession));
      expect(seen.length).toBeGreaterThan(0);
      await get(`/api/dcat/datasets/${seen[0]}`).expect(200);
      const hidden = await c.accession('EMPTY dataset 1');
      await get(`/api/dcat/datasets/${hidden}`).expect(404);
      const one = await get(`/api/dcat/datasets/${hidden}?format=jsonld`, TEST_GLOBAL_KEY).expect(
        200,
      );
      expect(one.headers['content-type']).toBe('application/ld+json; charset=utf-8');
      expect((await parse(one.text, 'jsonld')).triples.join('\n')).toContain('EMPTY dataset 1');
      await get('/api/dcat', 'not-a-key').expect(401);
    },
    SHACL_MS,
  );

  it('a client that hangs up mid-page gives its connection back (more aborts than the pool holds)', async () => {
    const { port } = (c.server.listening ? c.server : c.server.listen(0)).address() as AddressInfo;
    for (let i = 0; i < 12; i++) {
      await new Promise<void>((resolve, reject) => {
        const req = httpGet(
          { port, path: '/api/dcat?page=2', headers: { 'X-API-Key': TEST_GLOBAL_KEY } },
          (res) => {
            res.once('data', () => {
              req.destroy();
              resolve();
            });
          },
        );
        req.on('error', (error) => (req.destroyed ? resolve() : reject(error)));
      });
    }
    // The pool has 4 connections: a leaked transaction per abort would leave none.
    await get('/api/dcat?page=2', TEST_GLOBAL_KEY).expect(200);
  });

  it('publishing, deprecating and exposing again change the answer on the next read', async () => {
    const accession = await c.accession('EMPTY dataset 2');
    const path = `/api/dcat/datasets/${accession}`;
    await get(path).expect(404);
    const admin = request(c.server);
    const exposed = await admin
      .post('/api/admin/exposures')
      .set('X-API-Key', TEST_GLOBAL_KEY)
      .send({ dataset: accession, endpoint: 'ELIXIR Luxembourg Data Catalog', form_id: 3 })
      .expect(201);
    await get(path).expect(200);
    expect((await get('/api/dcat?page=1')).text).toContain(accession);
    await admin
      .delete(`/api/admin/exposures/${exposed.body.id}`)
      .set('X-API-Key', TEST_GLOBAL_KEY)
      .send({ reason: 'withdrawn' })
      .expect(200);
    await get(path).expect(404);
    // The endpoint still sees it, marked deprecated, in DCAT as in its JSON export.
    const endpointKey = KEYS.catalogEndpoint;
    const dcat = await get(path, endpointKey).expect(200);
    expect(dcat.text).toContain('owl:deprecated "true"^^xsd:boolean');
    const json = await get(`/api/datasets?elu_accession=${accession}`, endpointKey).expect(200);
    // As DAISY's core/importer/datasets_exporter.py (elixir-luxembourg/daisy e48cd1e) writes them:
    // the endpoint's exposure ordered by -deprecated_at (active first), fields `deprecated`,
    // `deprecation_date`, `deprecation_notes`, `released_date`, `form_id`, `request_pdf_enabled`.
    expect(json.body.items[0]).toMatchObject({
      deprecated: true,
      deprecation_notes: 'withdrawn',
      form_id: 3,
      request_pdf_enabled: false,
    });
    await admin
      .post('/api/admin/exposures')
      .set('X-API-Key', TEST_GLOBAL_KEY)
      .send({ dataset: accession, endpoint: 'ELIXIR Luxembourg Data Catalog', form_id: 4 })
      .expect(201);
    await get(path).expect(200);
    expect((await get(path, endpointKey).expect(200)).text).not.toContain('owl:deprecated');
  });
});
