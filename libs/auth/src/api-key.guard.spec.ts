import { Body, Controller, ExecutionContext, Get, Injectable, Post } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { gzipSync } from 'node:zlib';
import request from 'supertest';
import { send } from '../../../test/robustness/support/hostile-client';
import { answerWithoutBody, portOf } from '../../../test/support/incomplete-body';
import { createTinyHttpApp } from '../../../test/support/tiny-http-app';
import { ApiKeyGuard } from './api-key.guard';
import {
  AllowBearer,
  CurrentPrincipal,
  OptionalAuth,
  Public,
  RequireKinds,
  ScopedRoute,
} from './auth.decorators';
import { AuthModule } from './auth.module';
import { BEARER_TOKEN_RESOLVER, BearerTokenResolver } from './principal';
import type { ApiKeyResolver, Principal } from './principal';
import { APP_START_MS } from '../../../test/support/timeouts';

const PRINCIPALS: Record<string, Principal> = {
  'global-key': { kind: 'global', name: 'global', canWrite: true },
  'user-key': { kind: 'user', id: 7, name: 'alice', canWrite: false },
  'endpoint-key': { kind: 'endpoint', id: 3, name: 'elixir', canWrite: false },
  'writer-key': { kind: 'write', name: 'write', canWrite: true },
  'scoped-key': { kind: 'registrar', name: 'registrar', canWrite: true, scope: 'registration' },
  'other-scope-key': { kind: 'other', name: 'other', canWrite: true, scope: 'elsewhere' },
  'broker-key': { kind: 'broker', name: 'broker', canWrite: false, vouchesForLogins: true },
};

/** Counts lookups so a spec can show that public routes never read a key. */
@Injectable()
class TestKeyResolver implements ApiKeyResolver {
  static calls: string[] = [];
  resolve(apiKey: string): Promise<Principal | null> {
    TestKeyResolver.calls.push(apiKey);
    return Promise.resolve(PRINCIPALS[apiKey] ?? null);
  }
}

const bearerResolver: BearerTokenResolver = {
  resolve: (token) =>
    Promise.resolve(
      token === 'good-token' ? { kind: 'bearer', id: 'sub-1', canWrite: false } : null,
    ),
};

@Controller('t')
class TestController {
  @Public()
  @Get('public')
  open(@CurrentPrincipal() principal?: Principal) {
    return { principal: principal ?? null };
  }

  @OptionalAuth()
  @Get('optional')
  optional(@CurrentPrincipal() principal?: Principal) {
    return { principal: principal ?? null };
  }

  @Get('protected')
  read(@CurrentPrincipal() principal?: Principal) {
    return { principal };
  }

  @Post('protected')
  write(@CurrentPrincipal() principal?: Principal) {
    return { principal };
  }

  @Post('echo')
  echo(@Body() body: unknown) {
    return { body };
  }

  @Public()
  @Post('public-echo')
  publicEcho(@Body() body: unknown) {
    return { body };
  }

  @RequireKinds('global')
  @Post('global-only')
  globalWrite() {
    return { ok: true };
  }

  @RequireKinds('global', 'endpoint')
  @Get('global-or-endpoint')
  globalOrEndpoint(@CurrentPrincipal() principal?: Principal) {
    return { principal };
  }

  @ScopedRoute('registration')
  @Post('scoped')
  scoped(@CurrentPrincipal() principal?: Principal) {
    return { principal };
  }

  @AllowBearer()
  @Get('bearer')
  withBearer(@CurrentPrincipal() principal?: Principal) {
    return { principal };
  }
}

@Public()
@Controller('open-class')
class PublicClassController {
  @Get()
  get() {
    return { ok: true };
  }
}

function expectError(res: request.Response, status: number, description: string): void {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(res.body).toEqual({ status: 'Error', description, more: {} });
}

describe('ApiKeyGuard', () => {
  let app: NestExpressApplication;
  let http: ReturnType<typeof request>;

  beforeAll(async () => {
    app = await createTinyHttpApp({
      imports: [
        AuthModule.forRoot({
          resolver: TestKeyResolver,
          providers: [{ provide: BEARER_TOKEN_RESOLVER, useValue: bearerResolver }],
        }),
      ],
      controllers: [TestController, PublicClassController],
    });
    http = request(app.getHttpServer());
  }, APP_START_MS);
  afterAll(() => app.close());
  beforeEach(() => {
    TestKeyResolver.calls = [];
  });

  describe('@Public()', () => {
    it('is open without a key and never reads one, even an invalid one', async () => {
      await http.get('/t/public').expect(200, { principal: null });
      await http.get('/t/public').set('X-API-Key', 'nonsense').expect(200, { principal: null });
      expect(TestKeyResolver.calls).toEqual([]);
    });

    it('works on a whole controller', async () => {
      await http.get('/open-class').expect(200, { ok: true });
    });
  });

  describe('@ScopedRoute()', () => {
    it('lets a principal of that scope, and unscoped writers, call the route', async () => {
      const res = await http.post('/t/scoped').set('X-API-Key', 'scoped-key').expect(201);
      expect(res.body).toEqual({ principal: PRINCIPALS['scoped-key'] });
      await http.post('/t/scoped').set('X-API-Key', 'global-key').expect(201);
    });

    it('refuses a principal of another scope on it', async () => {
      const res = await http.post('/t/scoped').set('X-API-Key', 'other-scope-key');
      expectError(res, 403, 'This key may only be used for elsewhere');
    });

    it.each([
      ['GET', '/t/protected'],
      ['POST', '/t/protected'],
      ['GET', '/t/optional'],
      ['POST', '/t/global-only'],
      ['GET', '/t/global-or-endpoint'],
    ])('refuses a scoped principal everywhere else: %s %s', async (method, path) => {
      const res = await http[method === 'GET' ? 'get' : 'post'](path).set(
        'X-API-Key',
        'scoped-key',
      );
      expectError(res, 403, 'This key may only be used for registration');
    });
  });

  describe('@OptionalAuth()', () => {
    it('is open without a key', async () => {
      await http.get('/t/optional').expect(200, { principal: null });
    });

    it('attaches the principal of a valid key', async () => {
      const res = await http.get('/t/optional').set('X-API-Key', 'user-key').expect(200);
      expect(res.body).toEqual({ principal: PRINCIPALS['user-key'] });
    });

    it('refuses a key that is sent but invalid', async () => {
      const res = await http.get('/t/optional').query({ API_KEY: 'wrong' });
      expectError(res, 401, 'Invalid API key');
    });
  });

  describe('protected routes (the default)', () => {
    it('without a key: 401 API key required, with a WWW-Authenticate challenge', async () => {
      const res = await http.get('/t/protected');
      expectError(res, 401, 'API key required');
      expect(res.headers['www-authenticate']).toBe('ApiKey');
    });

    it('with an unknown key: 401 Invalid API key', async () => {
      const res = await http.get('/t/protected').set('X-API-Key', 'wrong');
      expectError(res, 401, 'Invalid API key');
      expect(res.headers['www-authenticate']).toBe('ApiKey');
    });

    it('accepts the key from the header or the API_KEY query parameter and attaches the principal', async () => {
      const viaHeader = await http.get('/t/protected').set('X-API-Key', 'user-key').expect(200);
      expect(viaHeader.body.principal).toEqual(PRINCIPALS['user-key']);
      const viaQuery = await http
        .get('/t/protected')
        .query({ API_KEY: 'endpoint-key' })
        .expect(200);
      expect(viaQuery.body.principal).toEqual(PRINCIPALS['endpoint-key']);
    });

    it('lets the header win over the query parameter', async () => {
      const res = await http
        .get('/t/protected')
        .set('X-API-Key', 'wrong')
        .query({ API_KEY: 'global-key' });
      expectError(res, 401, 'Invalid API key');
      expect(TestKeyResolver.calls).toEqual(['wrong']);
    });

    it('lets read-only principals read with GET and HEAD', async () => {
      await http.get('/t/protected').set('X-API-Key', 'user-key').expect(200);
      await http.head('/t/protected').set('X-API-Key', 'user-key').expect(200);
    });

    it('refuses a write by a read-only principal with 403', async () => {
      const res = await http.post('/t/protected').set('X-API-Key', 'user-key');
      expectError(res, 403, 'Write operations require the global API key');
    });

    it('checks the key before the right to write (401 before 403)', async () => {
      expectError(await http.post('/t/protected'), 401, 'API key required');
      expectError(
        await http.post('/t/protected').set('X-API-Key', 'wrong'),
        401,
        'Invalid API key',
      );
    });

    it('lets a principal that may write do so', async () => {
      const res = await http.post('/t/protected').set('X-API-Key', 'global-key').expect(201);
      expect(res.body.principal).toEqual(PRINCIPALS['global-key']);
    });
  });

  describe('the body is read only after the key passed', () => {
    let port: number;
    beforeAll(async () => {
      port = await portOf(app.getHttpServer());
    });

    it('answers 401 while the body of a request without a key, or with a wrong one, is still arriving', async () => {
      const none = await answerWithoutBody(port, { method: 'POST', path: '/t/echo' });
      expect(none.status).toBe(401);
      expect(JSON.parse(none.body)).toEqual({
        status: 'Error',
        description: 'API key required',
        more: {},
      });
      const wrong = await answerWithoutBody(port, {
        method: 'POST',
        path: '/t/echo',
        headers: { 'X-API-Key': 'wrong' },
      });
      expect(wrong.status).toBe(401);
      expect(JSON.parse(wrong.body).description).toBe('Invalid API key');
      const readOnly = await answerWithoutBody(port, {
        method: 'POST',
        path: '/t/echo',
        headers: { 'X-API-Key': 'user-key' },
      });
      expect(readOnly.status).toBe(403);
    });

    /** 64 KiB is the limit here: this inflates to 1 MiB from about 1 KiB on the wire. */
    const gzipBomb = {
      method: 'POST',
      path: '/t/echo',
      body: gzipSync(Buffer.from(`{"a":"${'x'.repeat(1024 * 1024)}"}`)),
      note: 'gzip bomb',
    };
    const gzipHeaders = { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' };

    it('refuses the key, not the body: a malformed, inflating or non-JSON body without a valid key is a 401', async () => {
      const malformed = await http
        .post('/t/echo')
        .set('X-API-Key', 'wrong')
        .set('Content-Type', 'application/json')
        .send('{"a":');
      expectError(malformed, 401, 'Invalid API key');
      const inflating = await send(port, { ...gzipBomb, headers: gzipHeaders });
      expect(inflating.status).toBe(401);
      expect(JSON.parse(inflating.body.toString()).description).toBe('API key required');
      const notJson = await http
        .post('/t/echo')
        .set('Content-Type', 'application/xml')
        .send('<a/>');
      expectError(notJson, 401, 'API key required');
    });

    it('delivers the 401 to a client that sends its whole large body and closes the connection', async () => {
      // Connection: close (no agent) and a body far larger than the socket buffers: closing
      // the socket with the body unread would reset the connection before the 401 is read.
      const big = {
        method: 'POST',
        path: '/t/echo',
        body: Buffer.alloc(4 * 1024 * 1024, 0x20),
        note: 'big',
      };
      for (let i = 0; i < 10; i++) {
        const res = await send(port, {
          ...big,
          body: Buffer.alloc(((i % 10) + 1) * 100_000, 0x5b),
          headers: { 'Content-Type': 'application/json' },
        });
        expect(res.status).toBe(401);
        expect(JSON.parse(res.body.toString()).description).toBe('API key required');
      }
    });

    it('reads and checks the body once the key is valid', async () => {
      await http
        .post('/t/echo')
        .set('X-API-Key', 'global-key')
        .send({ a: 1 })
        .expect(201, { body: { a: 1 } });
      const inflating = await send(port, {
        ...gzipBomb,
        headers: { ...gzipHeaders, 'X-API-Key': 'global-key' },
      });
      expect(inflating.status).toBe(413);
      const malformed = await http
        .post('/t/echo')
        .set('X-API-Key', 'global-key')
        .set('Content-Type', 'application/json')
        .send('{"a":');
      expectError(malformed, 400, 'Malformed JSON body');
    });

    it('still reads bodies on public routes', async () => {
      await http
        .post('/t/public-echo')
        .send({ b: 2 })
        .expect(201, { body: { b: 2 } });
    });
  });

  describe('@RequireKinds()', () => {
    it('refuses a read-only principal on a write with the write message, before any kind check', async () => {
      const res = await http.post('/t/global-only').set('X-API-Key', 'user-key');
      expectError(res, 403, 'Write operations require the global API key');
    });

    it('refuses other kinds with 403 naming the kinds wanted', async () => {
      const res = await http.post('/t/global-only').set('X-API-Key', 'writer-key');
      expectError(res, 403, 'This operation requires a global key');
      const read = await http.get('/t/global-or-endpoint').set('X-API-Key', 'user-key');
      expectError(read, 403, 'This operation requires a global or endpoint key');
    });

    it('lets the listed kinds through', async () => {
      await http.post('/t/global-only').set('X-API-Key', 'global-key').expect(201, { ok: true });
      const res = await http
        .get('/t/global-or-endpoint')
        .set('X-API-Key', 'endpoint-key')
        .expect(200);
      expect(res.body.principal.kind).toBe('endpoint');
    });

    it('still answers 401 first when the key is missing', async () => {
      expectError(await http.get('/t/global-or-endpoint'), 401, 'API key required');
    });
  });

  describe('bearer tokens', () => {
    it('are accepted on @AllowBearer() routes', async () => {
      const res = await http.get('/t/bearer').set('Authorization', 'Bearer good-token').expect(200);
      expect(res.body.principal).toEqual({ kind: 'bearer', id: 'sub-1', canWrite: false });
    });

    it('an unknown token is 401 Invalid API key', async () => {
      const res = await http.get('/t/bearer').set('Authorization', 'Bearer bad-token');
      expectError(res, 401, 'Invalid API key');
    });

    it('are ignored on other routes', async () => {
      const res = await http.get('/t/protected').set('Authorization', 'Bearer good-token');
      expectError(res, 401, 'API key required');
    });

    it('an API key, when sent too, is the one used', async () => {
      const res = await http
        .get('/t/bearer')
        .set('Authorization', 'Bearer good-token')
        .set('X-API-Key', 'user-key')
        .expect(200);
      expect(res.body.principal.kind).toBe('user');
    });

    it('forwarded beside a key that vouches for logins: the login is the principal, a bad one 401', async () => {
      const res = await http
        .get('/t/bearer')
        .set('Authorization', 'Bearer good-token')
        .set('X-API-Key', 'broker-key')
        .expect(200);
      expect(res.body.principal).toEqual({ kind: 'bearer', id: 'sub-1', canWrite: false });
      const bad = await http
        .get('/t/bearer')
        .set('Authorization', 'Bearer bad-token')
        .set('X-API-Key', 'broker-key');
      expectError(bad, 401, 'Invalid API key');
      // Without a login, the key is the principal; on a route without bearer tokens, too.
      const alone = await http.get('/t/bearer').set('X-API-Key', 'broker-key').expect(200);
      expect(alone.body.principal.kind).toBe('broker');
    });

    it('a non-Bearer Authorization header counts as no credentials', async () => {
      const res = await http.get('/t/bearer').set('Authorization', 'Basic dXNlcjpwYXNz');
      expectError(res, 401, 'API key required');
    });
  });
});

describe('ApiKeyGuard without a bearer resolver, with a custom write message', () => {
  let app: NestExpressApplication;

  beforeAll(async () => {
    app = await createTinyHttpApp({
      imports: [
        AuthModule.forRoot({
          resolver: TestKeyResolver,
          options: { writeDeniedMessage: 'Write operations require the provisioner write key' },
        }),
      ],
      controllers: [TestController],
    });
  }, APP_START_MS);
  afterAll(() => app.close());

  it('treats a bearer token as no credentials', async () => {
    const res = await request(app.getHttpServer())
      .get('/t/bearer')
      .set('Authorization', 'Bearer good-token');
    expectError(res, 401, 'API key required');
  });

  it('uses the configured sentence for a refused write', async () => {
    const res = await request(app.getHttpServer())
      .post('/t/protected')
      .set('X-API-Key', 'endpoint-key');
    expectError(res, 403, 'Write operations require the provisioner write key');
  });
});

describe('ApiKeyGuard outside HTTP', () => {
  it('does not interfere with other transports (RPC, websockets)', async () => {
    const resolver = { resolve: jest.fn() };
    const guard = new ApiKeyGuard(new Reflector(), resolver);
    const context = { getType: () => 'rpc' } as unknown as ExecutionContext;
    await expect(guard.canActivate(context)).resolves.toBe(true);
    expect(resolver.resolve).not.toHaveBeenCalled();
  });
});
