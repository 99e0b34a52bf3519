import { DemoCatalog, KeyName, startDemoCatalog } from './demo-catalog.fixture';

interface Item {
  id_at_source: string;
  other_external_id: string | null;
  description: string | null;
  data_declarations: { data_types: string[]; data_types_notes: string | null }[];
  deprecation_date?: string | null;
  released_date?: string;
}

/**
 * PostgreSQL writes each dataset of `/api/datasets` as JSON text; the answer must be what
 * JSON.stringify writes for it: no spaces, its escapes, text sorted and emptied as the export
 * rules say, timestamps in whole seconds.
 */
describe('/api/datasets as JSON text written by the database', () => {
  let c: DemoCatalog;
  const awkward = 'a\u0001b"c\\ \n\t é 😀 \u2028 </script>';
  beforeAll(async () => {
    c = await startDemoCatalog();
    const first = '(SELECT min(id) FROM datasets)';
    await c.dataSource.query(
      `UPDATE datasets SET description = '', other_external_id = $1 WHERE id = ${first}`,
      [awkward],
    );
    await c.dataSource.query(
      `UPDATE data_declarations SET data_types = ARRAY['b', 'é', 'Z', '_x', '😀', 'a'],
         data_types_notes = '' WHERE dataset_id = ${first}`,
    );
    await c.dataSource.query(
      `UPDATE exposures SET created_at = '2023-01-02 03:04:05.999999+02',
         deprecated_at = '2024-03-05 09:12:44.5+00' WHERE dataset_id = ${first}`,
    );
    await c.versionSettled();
  });
  afterAll(() => c.close());

  it.each<KeyName>(['global', 'catalogEndpoint'])(
    'is written as JSON.stringify (%s key)',
    async (key) => {
      const res = await c.get('/api/datasets', key).expect(200);
      const body = JSON.parse(res.text) as { items: Item[] };
      expect(res.text).toBe(JSON.stringify(body));
      const item = body.items.find((i) => i.other_external_id === awkward)!;
      expect(item.description).toBeNull();
      for (const declaration of item.data_declarations) {
        expect(declaration.data_types).toEqual(['Z', '_x', 'a', 'b', 'é', '😀']);
        expect(declaration.data_types_notes).toBeNull();
      }
      if (key === 'catalogEndpoint') {
        expect(item.released_date).toBe('2023-01-02T01:04:05+00:00');
        expect(item.deprecation_date).toBe('2024-03-05T09:12:44+00:00');
      } else {
        expect(item).not.toHaveProperty('released_date');
      }
    },
  );
});
