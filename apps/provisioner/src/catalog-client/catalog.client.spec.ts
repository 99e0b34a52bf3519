import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadProvisionerSettings } from '../config/provisioner.settings';
import { CatalogClient, CatalogRefusedError, CatalogUnavailableError } from './catalog.client';

const KEY = 'registration-key-0123456789abcdef0123456789';
const REGISTRATION = {
  import_id: 'dropzone-dataset-DS-1',
  dataset: { title: 'Reads', project: 'P' },
  storage: { platform: 'p', location: 'projects/P/S/data/raw/DS-1' },
};

describe('CatalogClient', () => {
  // A fake catalog: answers every registration with `answer` and notes the key it was sent.
  let server: Server;
  let answer: { status: number; body: unknown } = { status: 200, body: {} };
  const keys: (string | undefined)[] = [];
  const client = (url: string, timeout = '1000') =>
    new CatalogClient(
      loadProvisionerSettings({
        REDIS_URL: 'redis://queue:6379',
        CATALOG_URL: url,
        CATALOG_API_KEY: KEY,
        CATALOG_TIMEOUT_MS: timeout,
      }),
    );
  let url: string;

  beforeAll(async () => {
    server = createServer((req, res) => {
      keys.push(req.headers['x-api-key'] as string | undefined);
      req.resume();
      req.on('end', () => {
        res.writeHead(answer.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(answer.body));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  it('returns the accession, sending the key in the header only', async () => {
    answer = { status: 200, body: { status: 'Success', accession: 'ELU_I_7' } };
    await expect(client(url).register(REGISTRATION)).resolves.toEqual({
      accession: 'ELU_I_7',
      changed: false,
    });
    expect(keys.at(-1)).toBe(KEY);
  });

  it('says whether the registration changed the catalog (any of its *_created flags)', async () => {
    answer = {
      status: 200,
      body: {
        status: 'Success',
        accession: 'ELU_I_7',
        dataset_created: false,
        storage_created: false,
        transfer_created: true,
      },
    };
    await expect(client(url).register(REGISTRATION)).resolves.toEqual({
      accession: 'ELU_I_7',
      changed: true,
    });
  });

  it('calls a 4xx a refusal, with the reason the catalog gives', async () => {
    answer = {
      status: 404,
      body: { description: 'Unknown project: P', more: { reason: 'unknown_project' } },
    };
    const error = await client(url)
      .register(REGISTRATION)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CatalogRefusedError);
    expect(error).toMatchObject({ status: 404, reason: 'unknown_project' });
    answer = { status: 401, body: { description: 'Invalid API key', more: {} } };
    await expect(client(url).register(REGISTRATION)).rejects.toMatchObject({ reason: 'http_401' });
  });

  it.each([500, 503, 429, 408])('calls %i a reason to retry', async (status) => {
    answer = { status, body: { description: 'later', more: {} } };
    await expect(client(url).register(REGISTRATION)).rejects.toBeInstanceOf(
      CatalogUnavailableError,
    );
  });

  it('calls an unreachable catalog a reason to retry, without the key in the message', async () => {
    const error = (await client('http://127.0.0.1:1')
      .register(REGISTRATION)
      .catch((e: unknown) => e)) as Error;
    expect(error).toBeInstanceOf(CatalogUnavailableError);
    expect(error.message).toMatch(/^catalog unreachable/);
    expect(error.message).not.toContain(KEY);
  });
});
