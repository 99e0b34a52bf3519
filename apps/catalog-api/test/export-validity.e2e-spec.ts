import request from 'supertest';
import type { Shape } from '../src/catalog-imports/shape-validators';
import { datasetShape, partnerShape, projectShape } from '../src/catalog-imports/import-shapes';
import { DemoCatalog, KEYS, startDemoCatalog } from './demo-catalog.fixture';
import { eluValidatorFor } from './support/elu-schemas';
import { date, generate, Random, References, someText } from './support/shape-bodies';

/**
 * Every record an import document or the write API (a storage registration) is accepted with
 * exports valid against the ELU schemas its export names (contract §1), tested as a property:
 * documents generated from the import shapes themselves (every field present or absent, null
 * where allowed, odd and longest texts, every enum value, aliases) and registrations as their
 * DTO takes them, posted one after the other; after each accepted one the whole export of its
 * kind is validated. PROPERTY_SEED and PROPERTY_RUNS give another seed and length (a
 * failure names its seed).
 */
const SEED = Number(process.env.PROPERTY_SEED ?? 34_010);
const RUNS = Number(process.env.PROPERTY_RUNS ?? 60);

interface Kind {
  route: string;
  /** A generated body for the route. */
  body: (rng: Random) => unknown;
  /** Where the export lists its records, and the schema each must satisfy. */
  list: string;
  wrapper: 'items' | 'results';
  schema: string;
}

/** An import document of 1-3 items generated from the kind's import shape. */
const documentOf = (shape: Shape<unknown>) => (rng: Random) => ({
  items: Array.from({ length: 1 + rng.int(3) }, () => generate(shape, rng, references)),
});

let references: References;
let projects: string[];
let partners: string[];

/**
 * A storage registration (the provisioner's write) as its DTO takes it: a dataset by title in a
 * project, odd titles and locations up to their longest, sizes, checksums and transfers or not.
 */
function registration(rng: Random) {
  const optional = <T>(value: () => T) => (rng.chance(0.5) ? value() : undefined);
  return {
    import_id: `import-${rng.int(1e9)}`,
    dataset: { title: someText(rng, 255), project: rng.pick(projects) },
    storage: {
      platform: someText(rng, 255),
      location: rng.chance(0.2) ? someText(rng, 4000).padEnd(4000, '界') : someText(rng, 4000),
      bytes: optional(() => rng.int(1e12)),
      manifest_sha256: optional(() => 'ab'.repeat(32)),
    },
    transfer: optional(() => ({
      partner: rng.pick(partners),
      source: someText(rng, 255),
      submission: someText(rng, 255),
      date: date(rng),
    })),
  };
}

const KINDS: Kind[] = [
  {
    route: '/api/partners',
    body: documentOf(partnerShape),
    list: '/api/partners',
    wrapper: 'results',
    schema: 'elu-institution.json',
  },
  {
    route: '/api/projects',
    body: documentOf(projectShape),
    list: '/api/projects',
    wrapper: 'items',
    schema: 'elu-project.json',
  },
  {
    route: '/api/datasets',
    body: documentOf(datasetShape),
    list: '/api/datasets',
    wrapper: 'items',
    schema: 'elu-dataset.json',
  },
  {
    route: '/api/registrations',
    body: registration,
    list: '/api/datasets',
    wrapper: 'items',
    schema: 'elu-dataset.json',
  },
];

describe('every accepted write exports schema-valid (generated bodies)', () => {
  let c: DemoCatalog;

  beforeAll(async () => {
    c = await startDemoCatalog();
    const names = async (sql: string) =>
      (await c.dataSource.query<{ v: string }[]>(sql)).map((row) => row.v);
    partners = await names('SELECT name AS v FROM partners');
    projects = await names('SELECT acronym AS v FROM projects');
    const cohorts = await names('SELECT name AS v FROM cohorts');
    const rng = new Random(SEED);
    references = {
      'contacts[].affiliations': () => [rng.pick(partners)],
      'transfers[].partner': () => rng.pick(partners),
      project: () => rng.pick(projects),
      'data_declarations[].cohorts': () => [{ cohort: rng.pick(cohorts) }],
      // A basis names declarations of its own item: none, here.
      'legal_bases[].data_declarations': () => [],
      'publications[].citation': () => `Citation ${rng.int(1000)}`,
    };
    // Accessions are the catalog's own: a generated one would name nothing or another record.
    for (const path of ['external_id', 'project_external_id']) references[path] = () => null;
  });
  afterAll(() => c.close());

  it.each(KINDS)(
    '$route',
    async (kind) => {
      const rng = new Random(SEED + kind.route.length);
      const validate = eluValidatorFor(kind.schema);
      let accepted = 0;
      const failures: unknown[] = [];
      for (let run = 0; run < RUNS && failures.length === 0; run++) {
        const body = kind.body(rng);
        const res = await request(c.server)
          .post(kind.route)
          .set('X-API-Key', KEYS.global)
          .send(body as object);
        // Refused (invalid, or naming what is not there or another project's): nothing to export.
        if ([400, 404, 409].includes(res.status)) continue;
        expect({ status: res.status, body: res.body as unknown }).toMatchObject({ status: 200 });
        accepted += 1;
        await c.versionSettled();
        const exported = await c.get(kind.list, 'global').expect(200);
        for (const record of exported.body[kind.wrapper] as unknown[]) {
          if (!validate(record))
            failures.push({ seed: SEED, run, body, record, errors: validate.errors });
        }
      }
      expect(failures.slice(0, 1)).toEqual([]);
      // Enough documents were accepted for the property to say something.
      expect(accepted).toBeGreaterThanOrEqual(RUNS / 5);
    },
    120_000,
  );
});
