import request from 'supertest';
import {
  ControllerTierApp,
  createControllerTierApp,
  refusal,
} from '../../../test/support/controller-tier';
import { APP_START_MS, REAL_IO_MS } from '../../../test/support/timeouts';
import { ProvisionerApiModule } from './api.module';
import { loadProvisionerSettings } from './config/provisioner.settings';
import { SettingsModule } from './config/settings.module';
import { configureQueueBackend } from './queue/queue-backend';

/**
 * The controller tier: every provisioner API route behind the real guard, validation pipe and
 * error envelope, with no queue, source or storage (services are stubs that fail when called,
 * so a handler that runs ends in a 500). Keys are the settings' own kinds, from a table.
 */
const WRITE_KEY = 'tier-write-key';
/**
 * The DRS routes and the bytes of its access URLs: outside the API-key guard (a passport, a
 * login or a signed URL is their credential); and the archive's public key, public by nature.
 */
const outsideKeys = (route: string) =>
  / \/(ga4gh\/drs\/v1|drs-bytes)\//.test(route) || route === 'GET /.well-known/c4gh-recipient';
/** What a key check says on a route: nothing on the routes outside it, which pass to their handler. */
const keyed = (verdict: (route: string) => string) => (route: string) =>
  outsideKeys(route) ? 'passes' : verdict(route);
const READ_KEY = 'tier-read-key';

// Each test sends a request to every route over a real socket: seconds on a loaded machine, past
// jest's 5 s default (a CI run at load 12 took longer).
jest.setTimeout(REAL_IO_MS);
describe('provisioner controller tier (guards and parameter validation, no queue)', () => {
  let tier: ControllerTierApp;

  beforeAll(async () => {
    const settings = loadProvisionerSettings({
      PROVISIONER_API_KEY: 'tier-settings-write-key-0123456789abcdef',
      REDIS_URL: 'redis://127.0.0.1:1',
      LOG_LEVEL: 'silent',
    });
    tier = await createControllerTierApp({
      appModule: ProvisionerApiModule.forRoot(settings, configureQueueBackend(settings, 'api')),
      imports: [SettingsModule.forRoot(settings)],
      samples: { srcsys: 'dropzone', id: 'dropzone-dataset-DS-1' },
      apiKeys: {
        [WRITE_KEY]: { kind: 'write', name: 'write', canWrite: true },
        [READ_KEY]: { kind: 'read', name: 'read', canWrite: false },
      },
      writeDeniedMessage: 'Write operations require the provisioner write key',
    });
  }, APP_START_MS);
  afterAll(() => tier?.app.close());

  it('serves the routes of every provisioner API controller', () => {
    expect(tier.routes.length).toBeGreaterThanOrEqual(8);
  });

  it('refuses a request without a key, or with an unknown one, on every route', async () => {
    expect(await tier.verdicts({})).toEqual(tier.expected(keyed(() => '401 API key required')));
    expect(await tier.verdicts({ 'X-API-Key': 'not-a-key' })).toEqual(
      tier.expected(keyed(() => '401 Invalid API key')),
    );
  });

  it('lets a read key read and refuses it every write; the write key passes everywhere', async () => {
    expect(await tier.verdicts({ 'X-API-Key': READ_KEY })).toEqual(
      tier.expected(
        keyed((route) =>
          route.startsWith('GET ')
            ? 'passes'
            : '403 Write operations require the provisioner write key',
        ),
      ),
    );
    expect(await tier.verdicts({ 'X-API-Key': WRITE_KEY })).toEqual(tier.expected(() => 'passes'));
  });

  it.each([
    ['/imports?state=bogus', ['state']],
    ['/imports?page=0&per_page=500', ['page', 'per_page']],
    ['/datasets/dropzone?submission=../x', ['submission']],
    ['/datasets/dropzone/diff?submission=a/b', ['submission']],
  ])('GET %s: 400 in the envelope naming every parameter', async (path, parameters) => {
    const res = await request(tier.app.getHttpServer()).get(path).set('X-API-Key', READ_KEY);
    expect(refusal(res)).toEqual({ status: 400, parameters });
  });

  it.each([
    ['/datasets/dropzone/import', {}, ['dataset_id']],
    ['/datasets/dropzone/import', { dataset_id: '../x' }, ['dataset_id']],
    ['/submissions/dropzone/import', { submission: 5, extra: 1 }, ['extra', 'submission']],
  ])('POST %s %j: 400 in the envelope naming every field', async (path, body, parameters) => {
    const res = await request(tier.app.getHttpServer())
      .post(path)
      .set('X-API-Key', WRITE_KEY)
      .send(body);
    expect(refusal(res)).toEqual({ status: 400, parameters });
  });
});
