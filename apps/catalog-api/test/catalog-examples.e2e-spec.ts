import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DemoCatalog, KeyName, startDemoCatalog } from './demo-catalog.fixture';

/**
 * docs/examples/<name>.json are real responses over the demo catalog. This test keeps them
 * honest: the live response must equal the checked-in one once volatile values are masked.
 * Regenerate with UPDATE_EXAMPLES=1 after an intended change.
 */
const EXAMPLES_DIR = join(__dirname, '../../../docs/examples');

const EXAMPLES: [name: string, path: string, key: KeyName | undefined][] = [
  ['cohorts', '/api/cohorts', undefined],
  ['partners', '/api/partners', undefined],
  ['projects', '/api/projects', 'global'],
  ['datasets', '/api/datasets?project_title=Multi-omics%20of%20Parkinson%27s%20disease', 'global'],
  ['datasets-endpoint', '/api/datasets', 'catalogEndpoint'],
  ['contracts', '/api/contracts', 'global'],
  ['users', '/api/users', 'global'],
  ['permissions', '/api/permissions/demo-oidc-victor-viewer', 'global'],
];

const VOLATILE: Record<string, string> = {
  elu_uuid: '00000000-0000-4000-8000-000000000000',
  released_date: '2026-01-01T00:00:00+00:00',
  deprecation_date: '2026-01-01T00:00:00+00:00',
};

function normalise(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normalise);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [
      k,
      k in VOLATILE && typeof v === 'string' ? VOLATILE[k] : normalise(v),
    ]),
  );
}

describe('checked-in example responses match the live ones', () => {
  let c: DemoCatalog;
  beforeAll(async () => {
    c = await startDemoCatalog();
  });
  afterAll(() => c.close());

  it.each(EXAMPLES)('docs/examples/%s.json', async (name, path, key) => {
    const res = await c.get(path, key).expect(200);
    const live = normalise(res.body);
    const file = join(EXAMPLES_DIR, `${name}.json`);
    if (process.env.UPDATE_EXAMPLES === '1') {
      if (!existsSync(EXAMPLES_DIR)) mkdirSync(EXAMPLES_DIR, { recursive: true });
      writeFileSync(file, `${JSON.stringify(live, null, 2)}\n`);
    }
    expect(live).toEqual(JSON.parse(readFileSync(file, 'utf8')));
  });
});
