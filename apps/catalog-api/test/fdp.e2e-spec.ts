import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataFactory, Parser, Quad, Writer } from 'n3';
import request from 'supertest';
import {
  CatalogTestApp,
  startCatalogApp,
  TEST_GLOBAL_KEY,
} from '../../../test/support/catalog-app';
import { DcatRepository } from '../src/dcat/dcat.repository';
import { DCAT_TEST_ENV, rdfCheck } from './support/dcat-test-env';
import { jenaValidate, ShaclResult } from './support/jena-shacl';
import { shapeMutants } from './support/shape-mutants';
import { FdpService } from '../src/fdp/fdp.service';
import { queriesDuring } from './support/queries-during';

/**
 * The catalog as a FAIR Data Point (GET /fdp), crawled as a harvester crawls one and checked
 * with Apache Jena's SHACL engine (test/support/jena-shacl.ts) against the FDP reference
 * implementation's shapes (../shared/reference/fdp/shapes/), DCAT-AP 3.0.1 and HealthDCAT-AP
 * Release 8 per access level (../shared/reference/dcat/, as test/support/rdf-check.mjs combines
 * them), and against the profiles the records name.
 *
 * Behaviour followed: FAIRDataTeam/FAIRDataPoint at 79cccab0 —
 * api/controller/metadata/GenericController.java (a record at its own IRI, Turtle and JSON-LD),
 * service/metadata/enhance/MetadataEnhancer.java (enhanceWithLinks: one ldp:DirectContainer per
 * child relation with dct:title, ldp:membershipResource, ldp:hasMemberRelation, ldp:contains;
 * enhanceWithResourceDefinition: dct:conformsTo the profile, dcat:endpointURL on the root),
 * service/profile/ProfileService.java (a prof:Profile whose prof:hasResource has the role
 * validation and a SHACL artefact).
 */

const BASE = 'https://catalog.test';
const ENV = { ...DCAT_TEST_ENV, DCAT_PAGE_SIZE: '4', FDP_VP_DISCOVERABLE: 'true' };
const SHARED = join(__dirname, '../../../../shared/reference');
/** A Jena run: a JVM start (2-10 s on a loaded machine) and the validation (seconds). */
const JENA_MS = 180_000;
const LDP = 'http://www.w3.org/ns/ldp#';
const DCAT = 'http://www.w3.org/ns/dcat#';
const RDF_TYPE = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type';
const LEVELS = {
  open_access: 'PUBLIC',
  registered_access: 'RESTRICTED',
  controlled_access: 'NON_PUBLIC',
} as const;

let dir: string;
let fileNo = 0;
const file = (ext: string) => join(dir, `f-${++fileNo}.${ext}`);

const checker = rdfCheck;

const DCT = 'http://purl.org/dc/terms/';
const HEALTH = 'http://healthdataportal.eu/ns/health#';
const CV = 'http://data.europa.eu/m8g/';
const DPV_PD = 'https://w3id.org/dpv/dpv-pd#';
const ACCESS_RIGHT = 'http://publications.europa.eu/resource/authority/access-right/';

/**
 * What HealthDCAT-AP asks of each dataset that the catalog knows (issue 58, item 4), read from a
 * graph, by accession: the HDAB with its contact's e-mail, the personal-data categories, the
 * access rights of its distributions, and the data services they are accessed through.
 */
function healthFacts(quads: Quad[]) {
  const objects = (s: string, p: string) =>
    quads
      .filter((q) => q.subject.value === s && q.predicate.value === p)
      .map((q) => q.object.value)
      .sort();
  const datasets = quads
    .filter((q) => q.predicate.value === RDF_TYPE && q.object.value === `${DCAT}Dataset`)
    .map((q) => q.subject.value);
  const facts: Record<string, unknown> = {};
  for (const ds of datasets) {
    const accession = objects(ds, `${DCT}identifier`).find((v) => !v.startsWith('urn:'))!;
    const distributions = objects(ds, `${DCAT}distribution`);
    facts[accession] = {
      accessRights: objects(ds, `${DCT}accessRights`),
      hdab: objects(ds, `${HEALTH}hdab`).map((a) => ({
        name: objects(a, 'http://xmlns.com/foaf/0.1/name'),
        email: objects(a, `${CV}contactPoint`).flatMap((c) => objects(c, `${CV}email`)),
      })),
      personalData: objects(ds, 'https://w3id.org/dpv#hasPersonalData'),
      distributions: distributions.map((d) => ({
        accessRights: objects(d, `${DCT}accessRights`),
        services: objects(d, `${DCAT}accessService`).map((a) => ({
          types: objects(a, RDF_TYPE),
          endpointURL: objects(a, `${DCAT}endpointURL`),
        })),
      })),
    };
  }
  return facts;
}

const ntriples = (quads: Quad[]) => new Writer({ format: 'N-Triples' }).quadsToString(quads);

/**
 * The FDP reference shapes, merged, with the one change the catalog's profile makes
 * (docs/decisions/fdp-profile.md): the distribution's dcat:mediaType is an IRI, at most one, as
 * DCAT-AP 3.0.1 has it, where the FDP's default schema wants exactly one literal.
 */
function fdpShapes(): Quad[] {
  const dirName = join(SHARED, 'fdp/shapes');
  const quads = readdirSync(dirName)
    .filter((f) => f.endsWith('.ttl'))
    .flatMap((f) =>
      new Parser({ baseIRI: `file://${dirName}/${f}` }).parse(
        readFileSync(join(dirName, f), 'utf8'),
      ),
    );
  const SH = 'http://www.w3.org/ns/shacl#';
  const mediaType = quads.find(
    (q) => q.predicate.value === `${SH}path` && q.object.value === `${DCAT}mediaType`,
  )!.subject;
  return quads
    .filter((q) => !(q.subject.equals(mediaType) && q.predicate.value === `${SH}minCount`))
    .map((q) =>
      q.subject.equals(mediaType) && q.predicate.value === `${SH}nodeKind`
        ? DataFactory.quad(q.subject, q.predicate, DataFactory.namedNode(`${SH}IRI`))
        : q,
    );
}

const violations = (results: ShaclResult[], own?: Set<string>) =>
  results
    .filter((r) => r.severity === 'Violation' && (own === undefined || own.has(r.focusNode)))
    .map((r) => `${r.focusNode} ${r.path} ${r.component} ${r.message}`);

interface Crawl {
  /** Every record read, by IRI, with its answer's headers. */
  records: Map<string, { headers: Record<string, string>; quads: Quad[] }>;
  union: Quad[];
}

describe('GET /fdp (a FAIR Data Point over the catalog)', () => {
  let c: CatalogTestApp;
  let crawl: Crawl;
  /** The dataset accessions by title. */
  const accessions = new Map<string, string>();
  const get = (path: string) => request(c.server).get(path);

  /**
   * Breadth-first from the root over ldp:contains (and LDP paging's rel="next"), in Turtle, as a
   * harvester reads a FAIR Data Point; each record's triples go into one union graph.
   */
  async function crawlFrom(root: string): Promise<Crawl> {
    const records: Crawl['records'] = new Map();
    const queue = [root];
    const seen = new Set(queue);
    const union = new Map<string, Quad>();
    while (queue.length > 0) {
      const url = queue.shift()!;
      const res = await get(url.slice(BASE.length)).set('Accept', 'text/turtle').expect(200);
      const quads = new Parser({ baseIRI: url }).parse(res.text);
      records.set(url, { headers: res.headers as Record<string, string>, quads });
      for (const q of quads) union.set(ntriples([q]), q);
      const next = [
        ...quads.filter((q) => q.predicate.value === `${LDP}contains`).map((q) => q.object.value),
        ...[...(res.headers.link ?? '').matchAll(/<([^>]+)>; rel="next"/g)].map((m) => m[1]),
      ];
      for (const n of next)
        if (!seen.has(n)) {
          seen.add(n);
          queue.push(n);
        }
    }
    return { records, union: [...union.values()] };
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'fdp-'));
    c = await startCatalogApp(ENV);
    const q = (sql: string, params: unknown[] = []) => c.dataSource.query(sql, params);
    await q(`INSERT INTO endpoints (name, url_pattern, api_key_hash)
      VALUES ('Data catalog', 'https://catalog.example/\${entity_id}', repeat('e', 64))`);
    await q(`INSERT INTO partners (name, acronym, country_code, geo_category, sector_category)
      VALUES ('City hospital', 'CH', 'LU', 'National', 'PUBLIC')`);
    await q(
      `INSERT INTO projects (acronym, title, description) VALUES ('FDP-P', 'FDP project', 'p')`,
    );
    await q(`INSERT INTO users (username, first_name, last_name, email) VALUES
      ('cus.one', 'Cus', 'One', 'one@lcsb.example'), ('cus.two', 'Cus', 'Two', 'two@lcsb.example')`);
    // Every access level, with and without a registered copy; a draft; a withdrawn dataset.
    const titles: string[] = [];
    for (const category of Object.keys(LEVELS))
      for (const copy of ['copy', 'nocopy']) titles.push(`${category} ${copy}`);
    titles.push('draft dataset', 'withdrawn dataset');
    for (const title of titles) {
      await q(
        `INSERT INTO datasets (title, description, project_id)
         SELECT $1::text, 'About ' || $1::text, id FROM projects WHERE acronym = 'FDP-P'`,
        [title],
      );
    }
    await q(`INSERT INTO data_declarations (dataset_id, title, data_types, access_category,
        access_procedure, partner_id, de_identification)
      SELECT d.id, 'declaration', ARRAY['RNASeq', 'Clinical_data'],
        COALESCE(split_part(d.title, ' ', 1), 'controlled_access')::access_category,
        'Apply to the DAC', (SELECT id FROM partners WHERE acronym = 'CH'), 'pseudonymization'
      FROM datasets d WHERE d.title LIKE '%\\_access %'`);
    await q(`INSERT INTO legal_bases (dataset_id, legal_basis_codes, personal_data_codes)
      SELECT id, ARRAY['6.1(a)']::legal_basis_code[], ARRAY['Health', 'Genetic']::personal_data_code[]
      FROM datasets`);
    await q(`INSERT INTO storage_locations (dataset_id, platform, location, byte_size, manifest_sha256)
      SELECT id, 'HPC', '/srv/' || id, 1000 + id, encode(sha256(convert_to('m' || id, 'UTF8')), 'hex')
      FROM datasets WHERE title LIKE '% copy'`);
    // The NON_PUBLIC copy is served by the provisioner's DRS (a dcat:accessService).
    await q(`UPDATE storage_locations SET drs_uri = 'drs://drs.catalog.test/P~S~' || dataset_id
      WHERE dataset_id = (SELECT id FROM datasets WHERE title = 'controlled_access copy')`);
    await q(`INSERT INTO transfers (dataset_id, partner_id, transfer_details, transfer_date, import_id)
      SELECT id, (SELECT id FROM partners WHERE acronym = 'CH'), 'import', DATE '2026-03-01', 'import-' || id
      FROM datasets WHERE title LIKE '% copy'`);
    await q(`INSERT INTO dataset_local_custodians (dataset_id, user_id)
      SELECT d.id, u.id FROM datasets d, users u WHERE u.username IN ('cus.one', 'cus.two')`);
    await q(`INSERT INTO exposures (dataset_id, endpoint_id, form_id, deprecated_at)
      SELECT d.id, (SELECT id FROM endpoints WHERE name = 'Data catalog'), 1,
        CASE WHEN d.title = 'withdrawn dataset' THEN now() END
      FROM datasets d WHERE d.title <> 'draft dataset'`);
    for (const row of await q('SELECT title, elu_accession FROM datasets'))
      accessions.set(row.title, row.elu_accession);
    await c.versionSettled();
    crawl = await crawlFrom(`${BASE}/fdp`);
  }, JENA_MS);
  afterAll(async () => {
    await c.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reaches every published dataset and its distributions from the root, and nothing else', () => {
    const published = [...accessions]
      .filter(([title]) => title.includes('_access'))
      .map(([, a]) => `${BASE}/fdp/dataset/${a}`);
    const datasets = [...crawl.records.keys()].filter((k) => k.includes('/fdp/dataset/'));
    expect(datasets.sort()).toEqual(published.sort());
    const distributions = [...crawl.records.keys()].filter((k) => k.includes('/fdp/distribution/'));
    // A registered copy each for three datasets; for each one without a copy, a distribution
    // saying how access is had.
    expect(distributions.filter((d) => d.includes('/storage-'))).toHaveLength(3);
    expect(distributions.filter((d) => d.endsWith('/access-request')).sort()).toEqual(
      Object.keys(LEVELS)
        .map((l) => `${BASE}/fdp/distribution/${accessions.get(`${l} nocopy`)}/access-request`)
        .sort(),
    );
    // The copy served by DRS names its server as a dcat:DataService.
    const drs = 'https://drs.catalog.test/ga4gh/drs/v1/';
    expect(
      crawl.union
        .filter((q) => q.predicate.value === `${DCAT}accessService`)
        .map((q) => q.object.value),
    ).toEqual([drs]);
    expect(
      crawl.union.some(
        (q) =>
          q.subject.value === drs &&
          q.predicate.value === RDF_TYPE &&
          q.object.value === `${DCAT}DataService`,
      ),
    ).toBe(true);
    // The catalog was read over two pages (six datasets, four a page).
    expect(crawl.records.has(`${BASE}/fdp/catalog?page=2`)).toBe(true);
  });

  it('answers an unpublished dataset 404 and a withdrawn one 410, as /api/dcat hides both', async () => {
    const draft = accessions.get('draft dataset')!;
    const withdrawn = accessions.get('withdrawn dataset')!;
    await get(`/api/dcat/datasets/${draft}`).expect(404);
    await get(`/api/dcat/datasets/${withdrawn}`).expect(404);
    await get(`/fdp/dataset/${draft}`).expect(404);
    const gone = await get(`/fdp/dataset/${withdrawn}`).expect(410);
    expect(gone.body.status).toBe('Error');
    await get(`/fdp/dataset/ELU_I_999999`).expect(404);
    const copy = accessions.get('open_access copy')!;
    await get(`/fdp/distribution/${copy}/storage-999999`).expect(404);
    await get(`/fdp/distribution/${withdrawn}/access-request`).expect(410);
    await get('/fdp/catalog?page=3').expect(404);
  });

  it('serves Turtle by default and JSON-LD by Accept, the same graph; refuses other types with 406', async () => {
    const ttl = await get('/fdp').expect(200);
    expect(ttl.headers['content-type']).toBe('text/turtle; charset=utf-8');
    const json = await get('/fdp').set('Accept', 'application/ld+json').expect(200);
    expect(json.headers['content-type']).toBe('application/ld+json; charset=utf-8');
    const a = file('ttl');
    const b = file('jsonld');
    writeFileSync(a, ttl.text);
    writeFileSync(b, json.text);
    const context = join(__dirname, '../src/dcat/dcat-ap-3.0.1.context.json');
    const [t, j] = await Promise.all([
      checker<{ triples: string[] }>({ op: 'parse', format: 'ttl', file: a, context }),
      checker<{ triples: string[] }>({ op: 'parse', format: 'jsonld', file: b, context }),
    ]);
    expect(t.triples.length).toBeGreaterThan(30);
    expect(j.triples).toEqual(t.triples);
    const refused = await get('/fdp').set('Accept', 'text/html').expect(406);
    expect(refused.body.more.acceptable).toEqual(['text/turtle', 'application/ld+json']);
    await get('/fdp/catalog').set('Accept', 'application/rdf+xml').expect(406);
    await get('/fdp').set('Accept', 'text/html, text/turtle;q=0.5').expect(200);
    await get('/fdp?format=rdf').expect(400);
  });

  it('gives every record Link rel=profile and rel=describedby, a CatalogRecord, and a profile that resolves to its SHACL', async () => {
    for (const [url, { headers, quads }] of crawl.records) {
      const profile = /<([^>]+)>; rel="profile"/.exec(headers.link)?.[1];
      const describedBy = /<([^>]+)>; rel="describedby"/.exec(headers.link)?.[1];
      expect(profile).toBeDefined();
      const subject = url.replace(/\?page=\d+$/, '');
      const about = (s: string, p: string) =>
        quads
          .filter((q) => q.subject.value === s && q.predicate.value === p)
          .map((q) => q.object.value);
      if (url.includes('/fdp/distribution/')) {
        // DCAT-AP's catalogue records describe datasets, services and catalogs: a distribution
        // says its metadata's dates itself, as the FDP does.
        expect(about(subject, 'https://w3id.org/fdp/fdp-o#metadataModified')).toHaveLength(1);
      } else {
        const record = `${subject}#record`;
        expect(about(record, RDF_TYPE)).toEqual([`${DCAT}CatalogRecord`]);
        expect(about(record, 'http://xmlns.com/foaf/0.1/primaryTopic')).toEqual([subject]);
        expect(about(record, 'http://purl.org/dc/terms/modified')).toHaveLength(1);
        expect(about(record, 'http://purl.org/dc/terms/conformsTo')).toEqual([profile]);
      }
      // The profile names its SHACL artefact, which is the describedby target and parses as SHACL.
      const prof = await get(profile!.slice(BASE.length)).expect(200);
      expect(prof.text).toContain(`prof:hasArtifact <${describedBy}>`);
    }
    const shacl = await get('/fdp/profile/dataset/shacl').expect(200);
    expect(shacl.headers['content-type']).toBe('text/turtle; charset=utf-8');
    const shapes = new Parser().parse(shacl.text);
    expect(shapes.some((q) => q.object.value === 'http://www.w3.org/ns/shacl#NodeShape')).toBe(
      true,
    );
    await get('/fdp/profile/nothing').expect(404);
  });

  it('answers 304 to If-None-Match and If-Modified-Since, and a changed record gets a new ETag', async () => {
    const path = `/fdp/dataset/${accessions.get('open_access copy')}`;
    const first = await get(path).expect(200);
    expect(first.headers.etag).toMatch(/^"[\w-]{32}"$/);
    expect(Date.parse(first.headers['last-modified'])).toBeGreaterThan(0);
    const again = await get(path).set('If-None-Match', first.headers.etag).expect(304);
    expect(again.text ?? '').toBe('');
    await get(path).set('If-Modified-Since', first.headers['last-modified']).expect(304);
    await get(path).set('If-None-Match', '"other"').expect(200);
    // JSON-LD is another representation: another ETag.
    const json = await get(path).set('Accept', 'application/ld+json').expect(200);
    expect(json.headers.etag).not.toBe(first.headers.etag);
    await c.dataSource.query(
      `UPDATE datasets SET title = 'open_access copy renamed' WHERE elu_accession = $1`,
      [accessions.get('open_access copy')],
    );
    await c.versionSettled();
    const changed = await get(path).set('If-None-Match', first.headers.etag).expect(200);
    expect(changed.text).toContain('open_access copy renamed');
    expect(changed.headers.etag).not.toBe(first.headers.etag);
    await c.dataSource.query(
      `UPDATE datasets SET title = 'open_access copy' WHERE elu_accession = $1`,
      [accessions.get('open_access copy')],
    );
    await c.versionSettled();
  });

  it('tags a record by data version, caller and type: a 304 is answered before anything is read or built, by any replica', async () => {
    const path = `/fdp/dataset/${accessions.get('controlled_access copy')}`;
    const key = { 'X-API-Key': TEST_GLOBAL_KEY };
    const anonymous = await get(path).expect(200);
    const keyed = await get(path).set(key).expect(200);
    // Each caller sees its own catalog: its own tag, and another caller's is no match.
    expect(keyed.headers.etag).not.toBe(anonymous.headers.etag);
    expect(keyed.headers.vary).toBe('Accept, X-API-Key, Authorization');
    await get(path).set('If-None-Match', keyed.headers.etag).expect(200);
    // A second replica over the same data, nothing built or kept yet: the same tags, and 304s
    // that read nothing but the version (which its tracker holds once settled).
    const replica = await startCatalogApp(ENV, c.databaseUrl);
    try {
      await replica.versionSettled();
      const build = jest.spyOn(
        replica.app.get(FdpService) as unknown as { build: () => unknown },
        'build',
      );
      const at = (h: Record<string, string>) => request(replica.server).get(path).set(h);
      const sent = await queriesDuring(async () => {
        await at({ ...key, 'If-None-Match': keyed.headers.etag }).expect(304);
        await at({ 'If-None-Match': anonymous.headers.etag }).expect(304);
        await at({ 'If-None-Match': `"other", ${anonymous.headers.etag}` }).expect(304);
      });
      expect(build).not.toHaveBeenCalled();
      expect(sent).toBe(0);
      const again = await at(key).expect(200);
      expect(again.headers.etag).toBe(keyed.headers.etag);
      expect(again.text).toBe(keyed.text);
      expect(build).toHaveBeenCalledTimes(1);
    } finally {
      await replica.close();
    }
  });

  it("reads a listed page's datasets ahead in one batch: the records after the first read nothing", async () => {
    const replica = await startCatalogApp(ENV, c.databaseUrl);
    try {
      await replica.versionSettled();
      const at = (url: string) =>
        request(replica.server).get(url.slice(BASE.length)).set('Accept', 'text/turtle');
      const facts = jest.spyOn(replica.app.get(DcatRepository), 'facts');
      const page = await at(`${BASE}/fdp/catalog`).expect(200);
      const datasets = [...page.text.matchAll(/<(https:\/\/catalog\.test\/fdp\/dataset\/[^>#]+)>/g)]
        .map((m) => m[1])
        .filter((u, i, all) => all.indexOf(u) === i);
      expect(datasets).toHaveLength(4);
      const first = await at(datasets[0]).expect(200);
      expect(facts).toHaveBeenCalledTimes(1);
      expect(facts.mock.calls[0][2]).toHaveLength(4);
      const distributions: string[] = [];
      const rest = await queriesDuring(async () => {
        for (const url of datasets.slice(1)) {
          const res = await at(url).expect(200);
          distributions.push(
            ...[
              ...res.text.matchAll(/<(https:\/\/catalog\.test\/fdp\/distribution\/[^>#]+)>/g),
            ].map((m) => m[1]),
          );
        }
        distributions.push(
          ...[
            ...first.text.matchAll(/<(https:\/\/catalog\.test\/fdp\/distribution\/[^>#]+)>/g),
          ].map((m) => m[1]),
        );
        for (const url of new Set(distributions)) await at(url).expect(200);
      });
      expect(new Set(distributions).size).toBe(4);
      expect(rest).toBe(0);
      // What was read ahead is what a record read alone says (a replica that listed nothing).
      const alone = await startCatalogApp(ENV, c.databaseUrl);
      try {
        await alone.versionSettled();
        for (const url of [...datasets, ...distributions]) {
          const own = await request(alone.server).get(url.slice(BASE.length)).expect(200);
          const ahead = await at(url).expect(200);
          expect([ahead.text, ahead.headers.etag]).toEqual([own.text, own.headers.etag]);
        }
      } finally {
        await alone.close();
      }
    } finally {
      await replica.close();
    }
  });

  it('carries what HealthDCAT-AP asks and the catalog knows, in /api/dcat and the FDP alike: the HDAB and its contact, personal-data categories, the DRS service, access rights on every distribution', async () => {
    const dcat: Quad[] = [];
    for (const page of [1, 2]) {
      const res = await get(`/api/dcat?page=${page}&format=ttl`).expect(200);
      dcat.push(...new Parser({ baseIRI: BASE }).parse(res.text));
    }
    const exported = healthFacts(dcat);
    const published = [...accessions].filter(([title]) => title.includes('_access'));
    expect(Object.keys(exported).sort()).toEqual(published.map(([, a]) => a).sort());
    // The same facts through the FDP (its dataset and distribution IRIs differ; the facts do not).
    expect(healthFacts(crawl.union)).toEqual(exported);
    for (const [title, accession] of published) {
      const level = LEVELS[title.split(' ')[0] as keyof typeof LEVELS];
      expect(exported[accession]).toEqual({
        accessRights: [`${ACCESS_RIGHT}${level}`],
        hdab: [{ name: [DCAT_TEST_ENV.DCAT_HDAB_NAME], email: [DCAT_TEST_ENV.DCAT_HDAB_EMAIL] }],
        personalData: [`${DPV_PD}Genetic`, `${DPV_PD}Health`],
        distributions: [
          {
            accessRights: [`${ACCESS_RIGHT}${level}`],
            // The copy the provisioner serves by DRS (the NON_PUBLIC one here).
            services:
              title === 'controlled_access copy'
                ? [
                    {
                      types: [`${DCAT}DataService`],
                      endpointURL: ['https://drs.catalog.test/ga4gh/drs/v1/'],
                    },
                  ]
                : [],
          },
        ],
      });
    }
  });

  it("pages the catalog's dataset container (LDP paging: Link rel=next/prev/first/last)", async () => {
    const first = crawl.records.get(`${BASE}/fdp/catalog`)!;
    expect(first.headers.link).toContain(`<${BASE}/fdp/catalog?page=2>; rel="next"`);
    expect(first.headers.link).toContain('<http://www.w3.org/ns/ldp#Page>; rel="type"');
    const second = crawl.records.get(`${BASE}/fdp/catalog?page=2`)!;
    expect(second.headers.link).toContain(`<${BASE}/fdp/catalog?page=1>; rel="prev"`);
    expect(second.headers.link).not.toContain('rel="next"');
    const contained = (r: { quads: Quad[] }) =>
      r.quads.filter((q) => q.predicate.value === `${LDP}contains`).length;
    expect([contained(first), contained(second)]).toEqual([4, 2]);
  });

  it("gives every distribution its dataset's access rights, NON_PUBLIC with and without a copy", () => {
    const rights = (url: string) =>
      crawl.records
        .get(url)!
        .quads.filter(
          (q) =>
            q.subject.value === url &&
            q.predicate.value === 'http://purl.org/dc/terms/accessRights',
        )
        .map((q) => q.object.value);
    const distributions = [...crawl.records.keys()].filter((k) => k.includes('/fdp/distribution/'));
    expect(distributions).toHaveLength(6);
    for (const [category, level] of Object.entries(LEVELS))
      for (const copy of ['copy', 'nocopy']) {
        const accession = accessions.get(`${category} ${copy}`)!;
        const own = distributions.filter((d) => d.includes(`/distribution/${accession}/`));
        expect(own).toHaveLength(1);
        expect(rights(own[0])).toEqual([
          `http://publications.europa.eu/resource/authority/access-right/${level}`,
        ]);
      }
  });

  it('marks the root, the catalog and the datasets ejp:VPDiscoverable (FDP_VP_DISCOVERABLE)', () => {
    const marked = crawl.union
      .filter((q) => q.object.value === 'https://w3id.org/ejp-rd/vocabulary#VPDiscoverable')
      .map((q) => q.subject.value);
    expect(marked).toContain(`${BASE}/fdp`);
    expect(marked).toContain(`${BASE}/fdp/catalog`);
    expect(marked.filter((m) => m.includes('/fdp/dataset/'))).toHaveLength(6);
  });

  it(
    'the crawled union graph has 0 violations of the FDP shapes and of the profiles its records name (Jena)',
    async () => {
      const data = file('nt');
      writeFileSync(data, ntriples(crawl.union));
      const fdp = file('nt');
      writeFileSync(fdp, ntriples(fdpShapes()));
      expect(violations(await jenaValidate(fdp, data))).toEqual([]);
      // The profiles' own SHACL, as served.
      const own = file('nt');
      const shapes: Quad[] = [];
      for (const kind of ['fdp', 'catalog', 'dataset', 'distribution'])
        shapes.push(
          ...new Parser().parse((await get(`/fdp/profile/${kind}/shacl`).expect(200)).text),
        );
      writeFileSync(own, ntriples(shapes));
      expect(violations(await jenaValidate(own, data))).toEqual([]);
    },
    2 * JENA_MS,
  );

  it(
    'the crawled union graph has 0 DCAT-AP 3.0.1 violations, and 0 HealthDCAT-AP ones at every access level (Jena)',
    async () => {
      const union = file('ttl');
      writeFileSync(union, ntriples(crawl.union));
      const profiles: [string, string | undefined][] = [
        ['dcat-ap-3.0.1', undefined],
        ['healthdcat-ap-r8-public', 'PUBLIC'],
        ['healthdcat-ap-r8-restricted', 'RESTRICTED'],
        ['healthdcat-ap-r8-non-public', 'NON_PUBLIC'],
      ];
      const found: Record<string, string[]> = {};
      for (const [profile, level] of profiles) {
        const shapes = file('nt');
        const data = file('nt');
        await checker({ op: 'shapes', profile, out: shapes });
        const { subjects } = await checker<{ subjects: string[] }>({
          op: 'data',
          file: union,
          level,
          out: data,
        });
        // Each level keeps its two datasets (with and without a copy).
        if (level !== undefined)
          expect(
            subjects.filter((s) => s.includes('/fdp/dataset/') && !s.includes('#')),
          ).toHaveLength(2);
        // Only the export's own nodes count: the EU vocabularies' concept schemes have no title.
        found[profile] = violations(await jenaValidate(shapes, data), new Set(subjects));
      }
      expect(found).toEqual(Object.fromEntries(profiles.map(([p]) => [p, []])));
    },
    4 * JENA_MS,
  );

  it(
    'the FDP shapes bite: each required property dropped, each constrained value broken, in a copy of a record, is a violation of that constraint',
    async () => {
      const shapes = fdpShapes();
      const { quads, expected } = shapeMutants(shapes, crawl.union);
      expect(expected.size).toBeGreaterThan(40);
      const data = file('nt');
      writeFileSync(data, ntriples([...crawl.union, ...quads]));
      const shapesFile = file('nt');
      writeFileSync(shapesFile, ntriples(shapes));
      const results = (await jenaValidate(shapesFile, data)).filter(
        (r) => r.severity === 'Violation',
      );
      const wrong: string[] = [];
      for (const [focus, want] of expected) {
        const got = results.filter((r) => r.focusNode === focus);
        const ok =
          got.some((r) => r.path === want.path && r.component === want.component) &&
          got.every((r) => r.path === want.path);
        if (!ok)
          wrong.push(
            `${want.what}: want ${want.component} on ${want.path}, got ${JSON.stringify(got.map((r) => [r.path, r.component]))}`,
          );
      }
      expect(wrong).toEqual([]);
      // And nothing but the mutants violates.
      expect(results.filter((r) => !expected.has(r.focusNode))).toEqual([]);
    },
    JENA_MS,
  );
});
