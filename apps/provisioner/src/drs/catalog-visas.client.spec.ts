import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { LOGIN_SUBJECT_HEADER } from '@app/auth';
import {
  CatalogRefusedLoginError,
  CatalogVisasClient,
  CatalogVisasUnavailableError,
  pathSegment,
  UnnamableSubjectError,
} from './catalog-visas.client';

describe('pathSegment', () => {
  it('encodes every character that could end or change the segment', () => {
    expect(pathSegment('a/b?c#d%e f')).toBe('a%2Fb%3Fc%23d%25e%20f');
    expect(pathSegment('%2e%2e')).toBe('%252e%252e');
    expect(pathSegment('...')).toBe('...');
  });

  it('refuses the dot segments a URL parser resolves, and the empty one', () => {
    for (const value of ['', '.', '..']) {
      expect(() => pathSegment(value)).toThrow(UnnamableSubjectError);
    }
  });
});

describe('CatalogVisasClient', () => {
  let server: Server;
  let seen: { url: string; key?: string; auth?: string }[];
  let answer: (url: string) => { status: number; subject?: string };
  let client: CatalogVisasClient;

  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push({
        url: req.url!,
        key: req.headers['x-api-key'] as string | undefined,
        auth: req.headers.authorization,
      });
      const { status, subject } = answer(req.url!);
      if (subject !== undefined) res.setHeader(LOGIN_SUBJECT_HEADER, subject);
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ga4gh_passport_v1: ['v1'] }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    client = new CatalogVisasClient(`http://127.0.0.1:${port}`, 'b'.repeat(40), 2000);
  });
  beforeEach(() => {
    seen = [];
    answer = () => ({ status: 200 });
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  it('asks for one subject in one segment, whatever it holds', async () => {
    await client.visasOf('a/../b?c');
    expect(seen).toEqual([
      { url: '/api/ga4gh/permissions/a%2F..%2Fb%3Fc', key: 'b'.repeat(40), auth: undefined },
    ]);
  });

  it('never sends a request for `.` or `..`', async () => {
    await expect(client.visasOf('..', 'login')).rejects.toThrow(UnnamableSubjectError);
    await expect(client.visasOf('.')).rejects.toThrow(UnnamableSubjectError);
    expect(seen).toEqual([]);
  });

  it('forwards a login beside the broker key, and takes only an answer for the verified login', async () => {
    answer = () => ({ status: 200, subject: 'sub%2F1' });
    expect(await client.visasOf('sub/1', 'tok')).toEqual(['v1']);
    expect(seen[0]).toMatchObject({ key: 'b'.repeat(40), auth: 'Bearer tok' });
    // A catalog that ignored the login (no header, or another subject's) answered with the
    // broker's rights: not the caller's visas.
    for (const subject of [undefined, 'someone-else']) {
      answer = () => ({ status: 200, subject });
      await expect(client.visasOf('sub/1', 'tok')).rejects.toThrow(CatalogVisasUnavailableError);
    }
  });

  it('a refused login is the caller’s (401); a 429 or 5xx is the catalog’s (unavailable)', async () => {
    answer = () => ({ status: 401 });
    await expect(client.visasOf('s', 'tok')).rejects.toThrow(CatalogRefusedLoginError);
    for (const status of [429, 500, 503]) {
      answer = () => ({ status });
      await expect(client.visasOf('s', 'tok')).rejects.toThrow(CatalogVisasUnavailableError);
    }
  });
});
