import request from 'supertest';
import {
  ControllerTierApp,
  createControllerTierApp,
  failingStub,
  refusal,
} from '../../../test/support/controller-tier';
import { APP_START_MS, REAL_IO_MS } from '../../../test/support/timeouts';
import { CatalogAppModule } from './app.module';
import { FastReads } from './read-cache/fast-reads';
import { jsonBody } from './read-cache/json-body';
import { Producer, ReadCacheService, ReadKey } from './read-cache/read-cache.service';
import { loadCatalogSettings } from './config/catalog.settings';
import { SettingsModule } from './config/settings.module';

/**
 * The controller tier: every catalog route behind the real guard, validation pipe and error
 * envelope, with no database (services and repositories are stubs that fail when called, so a
 * handler that runs ends in a 500). Keys are resolved by a table instead of the database.
 */
const GLOBAL = 'tier-global-key';
const USER = 'tier-user-key';
const ENDPOINT = 'tier-endpoint-key';
const TOKEN = 'tier-bearer-token';
const BROKER = 'tier-broker-key';
const VISAS = 'GET /api/ga4gh/permissions/:user_oidc_id';

/** Anyone may call these (public, or a key is optional); every other route needs a key. */
const PUBLIC = [
  'GET /api/cohorts',
  'GET /api/termsearch/:category',
  'POST /api/accessreq',
  'POST /api/accessreq/revoke',
  'GET /api/jwk',
  'GET /api/dcat/context.jsonld',
  'GET /fdp/profile/:kind',
  'GET /fdp/profile/:kind/shacl',
];
const OPTIONAL_KEY = [
  'GET /api/partners',
  'GET /api/dcat',
  'GET /api/dcat/datasets/:accession',
  'GET /fdp',
  'GET /fdp/catalog',
  'GET /fdp/dataset/:accession',
  'GET /fdp/distribution/:accession/:key',
];
/** Routes for the global key alone: other kinds are refused even where they could read. */
const GLOBAL_ONLY =
  /^(POST \/api\/(partners|cohorts|projects|datasets|contracts)|\w+ \/api\/(admin|idp)\/.*|GET \/api\/projects\/:acronym\/audit-crate)$/;
const WRITE = /^(POST|PUT|PATCH|DELETE) /;
const WRITE_DENIED = '403 Write operations require the global API key';

// Each test sends a request to every route over a real socket: seconds on a loaded machine, past
// jest's 5 s default (a CI run at load 12 took longer).
jest.setTimeout(REAL_IO_MS);
describe('catalog-api controller tier (guards and parameter validation, no database)', () => {
  let tier: ControllerTierApp;
  const open = (route: string) => PUBLIC.includes(route) || OPTIONAL_KEY.includes(route);

  beforeAll(async () => {
    const settings = loadCatalogSettings({
      DATABASE_URL: 'postgres://unused/none',
      LOG_LEVEL: 'silent',
    });
    tier = await createControllerTierApp({
      appModule: CatalogAppModule.forRoot(settings),
      imports: [SettingsModule.forRoot(settings)],
      samples: { category: 'disease', user_oidc_id: 'sub-1' },
      // The read cache runs the handler (its parameters are validated then) with no snapshot:
      // without a database, a handler that gets past validation ends in a 500 as elsewhere.
      providers: [
        {
          provide: ReadCacheService,
          useValue: {
            load: async (_key: ReadKey, produce: Producer) => ({
              version: 'tier',
              entry: await jsonBody(await produce(failingStub('EntityManager') as never)),
            }),
          },
        },
        {
          provide: FastReads,
          useValue: { remember: () => undefined, deriveTagsWith: () => undefined },
        },
      ],
      apiKeys: {
        [GLOBAL]: { kind: 'global', name: 'global', canWrite: true },
        [USER]: { kind: 'user', id: 7, name: 'ada', canWrite: false },
        [ENDPOINT]: { kind: 'endpoint', id: 3, name: 'catalog', canWrite: false },
        [BROKER]: { kind: 'broker', name: 'broker', canWrite: false, scope: 'GA4GH visas' },
      },
      bearerTokens: { [TOKEN]: { kind: 'bearer', id: 'sub-1', canWrite: false } },
    });
  }, APP_START_MS);
  afterAll(() => tier?.app.close());

  it('serves the routes of every catalog controller', () => {
    expect(tier.routes.length).toBeGreaterThanOrEqual(30);
    expect(tier.routes.map((r) => r.route)).toEqual(
      expect.arrayContaining([...PUBLIC, ...OPTIONAL_KEY]),
    );
  });

  it('refuses a request without a key on every route but the open ones', async () => {
    expect(await tier.verdicts({})).toEqual(
      tier.expected((route) => (open(route) ? 'passes' : '401 API key required')),
    );
  });

  it('refuses an unknown key everywhere a key is read (a key on a public route is never read)', async () => {
    expect(await tier.verdicts({ 'X-API-Key': 'not-a-key' })).toEqual(
      tier.expected((route) => (PUBLIC.includes(route) ? 'passes' : '401 Invalid API key')),
    );
  });

  it('lets the global key through everywhere', async () => {
    expect(await tier.verdicts({ 'X-API-Key': GLOBAL })).toEqual(tier.expected(() => 'passes'));
  });

  it.each([
    ['user', USER],
    ['endpoint', ENDPOINT],
  ])('refuses a %s key every write and every global-only route', async (kind, key) => {
    expect(await tier.verdicts({ 'X-API-Key': key })).toEqual(
      tier.expected((route) => {
        if (PUBLIC.includes(route)) return 'passes';
        if (WRITE.test(route)) return WRITE_DENIED;
        if (GLOBAL_ONLY.test(route)) return '403 This operation requires a global key';
        // A login is a person: the global key, a user key or a bearer token.
        if (route === 'GET /api/users' && kind === 'endpoint')
          return '403 This operation requires a global or user or bearer key';
        // Visas: the global key, a broker key, or the person's own login.
        if (route === VISAS) return '403 This operation requires a global or broker or bearer key';
        return 'passes';
      }),
    );
  });

  it('takes a bearer token on GET /api/users and the visas alone; elsewhere it is no credential', async () => {
    expect(await tier.verdicts({ Authorization: `Bearer ${TOKEN}` })).toEqual(
      tier.expected((route) =>
        open(route) || route === 'GET /api/users' || route === VISAS
          ? 'passes'
          : '401 API key required',
      ),
    );
  });

  it('confines a broker key to the visas', async () => {
    expect(await tier.verdicts({ 'X-API-Key': BROKER })).toEqual(
      tier.expected((route) =>
        PUBLIC.includes(route) || route === VISAS
          ? 'passes'
          : '403 This key may only be used for GA4GH visas',
      ),
    );
  });

  it.each([
    ['/api/partners?published=maybe', ['published']],
    ['/api/partners?fields=name,bogus', ['fields']],
    ['/api/projects?project_id=x', ['project_id']],
    ['/api/projects?project_id=0', ['project_id']],
    ['/api/projects?fields=bogus', ['fields']],
    ['/api/datasets?project_id=1.5', ['project_id']],
    ['/api/contracts?project_id=-1', ['project_id']],
    ['/api/termsearch/disease?page=1', ['search']],
    ['/api/termsearch/disease?search=a&page=0', ['page']],
    ['/api/termsearch/disease?search=<201 characters>&page=1', ['search']],
  ])('GET %s: 400 in the envelope naming the parameter', async (path, parameters) => {
    const res = await request(tier.app.getHttpServer())
      .get(path.replace('<201 characters>', 'a'.repeat(201)))
      .set('X-API-Key', GLOBAL);
    expect(refusal(res)).toEqual({ status: 400, parameters });
  });

  it.each([
    ['POST', '/api/admin/users/x/api-key'],
    ['PATCH', '/api/admin/users/0'],
    ['DELETE', '/api/admin/exposures/-2'],
  ])('%s %s: 400 naming the id that is not a positive integer', async (method, path) => {
    const http = request(tier.app.getHttpServer());
    const call =
      method === 'POST'
        ? http.post(path)
        : method === 'PATCH'
          ? http.patch(path)
          : http.delete(path);
    const res = await call.set('X-API-Key', GLOBAL).send({});
    expect(refusal(res)).toEqual({ status: 400, parameters: ['id'] });
  });
});
