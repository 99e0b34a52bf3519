import { DemoCatalog, KeyName, startDemoCatalog } from './demo-catalog.fixture';
import { eluValidatorFor as validatorFor } from './support/elu-schemas';

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
