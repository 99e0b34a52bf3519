import Ajv from 'ajv-draft-04';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DemoCatalog, KeyName, startDemoCatalog } from './demo-catalog.fixture';

/** Third-party schemas (AGPL): read from the shared reference, never copied into the repo. */
const SCHEMA_DIR = join(__dirname, '../../../../shared/reference/daisy-json/schemas');
const SCHEMA_BASE =
  'https://raw.githubusercontent.com/elixir-luxembourg/json-schemas/v0.0.6/schemas/';

interface Schema {
  $id: string;
  definitions?: Record<string, { definitions?: Record<string, unknown> }>;
}

/**
 * elu-study.json refers to `#/definitions/term_set` but nests it one level deeper (under
 * `elu:study`), so no validator can resolve it; lift nested definitions to the top, in memory.
 */
function repairDanglingRefs(schema: Schema): Schema {
  const lifted: Record<string, unknown> = {};
  for (const definition of Object.values(schema.definitions ?? {})) {
    Object.assign(lifted, definition.definitions ?? {});
  }
  return { ...schema, definitions: { ...lifted, ...schema.definitions } } as Schema;
}

function validatorFor(schema: string) {
  const ajv = new Ajv({ allErrors: true, strict: false });
  // The two formats the schemas use, checked here rather than through another dependency.
  ajv.addFormat(
    'uri',
    (value: string) => URL.canParse(value) && /^[a-z][a-z0-9+.-]*:/i.test(value),
  );
  ajv.addFormat('email', /^[^\s@]+@[^\s@]+\.[^\s@]+$/);
  for (const file of readdirSync(SCHEMA_DIR).filter((f) => f.endsWith('.json'))) {
    // Draft-04 names a schema by `id`; these files use `$id`, so register them under it.
    const schema = JSON.parse(readFileSync(join(SCHEMA_DIR, file), 'utf8')) as Schema;
    ajv.addSchema(repairDanglingRefs(schema), schema.$id);
  }
  const validate = ajv.getSchema(SCHEMA_BASE + schema);
  if (validate === undefined) throw new Error(`schema ${schema} not registered`);
  return validate;
}

describe('exports validate against the ELU JSON schemas v0.0.6 (complete demo data)', () => {
  let c: DemoCatalog;
  beforeAll(async () => {
    c = await startDemoCatalog();
  });
  afterAll(() => c.close());

  it.each<[string, string, string, KeyName]>([
    ['/api/projects', 'items', 'elu-project.json', 'global'],
    ['/api/datasets', 'items', 'elu-dataset.json', 'global'],
    ['/api/datasets', 'items', 'elu-dataset.json', 'catalogEndpoint'],
    ['/api/partners', 'results', 'elu-institution.json', 'global'],
  ])('%s (%s of %s, %s key)', async (path, wrapper, schema, key) => {
    const validate = validatorFor(schema);
    const res = await c.get(path, key).expect(200);
    const records = res.body[wrapper] as unknown[];
    expect(records.length).toBeGreaterThan(0);
    for (const record of records) {
      const valid = validate(record);
      expect(validate.errors ?? []).toEqual([]);
      expect(valid).toBe(true);
    }
  });

  it('the validator really rejects a broken export', async () => {
    const validate = validatorFor('elu-dataset.json');
    const res = await c.get('/api/datasets', 'global').expect(200);
    const broken = {
      ...res.body.items[0],
      source: 'not a uri',
      legal_bases: [{ legal_basis_codes: ['6.1(z)'] }],
    };
    expect(validate(broken)).toBe(false);
  });
});
