import {
  Body,
  Controller,
  Delete,
  ForbiddenException,
  Get,
  HttpException,
  Logger,
  NotFoundException,
  Param,
  Post,
  Query,
  Res,
} from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min, ValidateNested } from 'class-validator';
import type { Response } from 'express';
import request from 'supertest';
import { createTinyHttpApp } from '../../../test/support/tiny-http-app';
import {
  BadGatewayError,
  ConflictError,
  PayloadTooLargeError,
  RateLimitedError,
  UnauthorizedError,
  ValidationFailedError,
} from './http-errors';
import { APP_START_MS } from '../../../test/support/timeouts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const MAX_BODY = 2048;

class SearchQuery {
  @Type(() => Number)
  @IsInt()
  @Min(1)
  page = 1;

  @IsOptional()
  @IsString()
  q?: string;
}

class Address {
  @IsString()
  city!: string;
}

class ItemBody {
  @IsString()
  @MaxLength(10)
  name!: string;

  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Max(5)
  size?: number;

  @IsOptional()
  @ValidateNested()
  @Type(() => Address)
  address?: Address;
}

function connectionRefused(): Error {
  return Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
}

const THROWN: Record<string, () => unknown> = {
  conflict: () => new ConflictError('Already exists', { id: 3 }),
  unauthorized: () => new UnauthorizedError('Invalid API key'),
  'rate-limited': () => new RateLimitedError(30),
  'bad-gateway': () => new BadGatewayError('REMS did not answer', { upstream: 'rems' }),
  'too-large': () => new PayloadTooLargeError(),
  'validation-one': () =>
    new ValidationFailedError([{ index: 2, field: 'name', message: 'is required' }]),
  'nest-forbidden': () => new ForbiddenException('Not yours'),
  'nest-not-found': () => new NotFoundException('No such dataset'),
  'nest-array': () => new HttpException({ message: ['first problem', 'second problem'] }, 422),
  'nest-plain': () => new HttpException('I am a teapot', 418),
  'nest-json-word': () => new HttpException('metadata must be a JSON-encoded object', 400),
  'nest-413': () => new HttpException('too big', 413),
  'nest-415': () => new HttpException('wrong type', 415),
  'nest-502': () => new HttpException('upstream said: SELECT secret FROM keys', 502),
  crash: () => new Error('relation "users" does not exist: SELECT password FROM users'),
  'not-an-error': () => 'a thrown string',
  econnrefused: connectionRefused,
  'pg-shutdown': () =>
    Object.assign(new Error('terminating connection due to administrator command'), {
      code: '57P01',
    }),
  'connection-terminated': () => new Error('Connection terminated unexpectedly'),
  'wrapped-cause': () => new Error('query failed', { cause: connectionRefused() }),
  // As TypeORM's QueryFailedError carries them: the driver's fields copied, the driver error kept.
  'pg-nul': () =>
    Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), {
      code: '22021',
      query: 'SELECT secret FROM keys WHERE name = $1',
    }),
  'pg-too-long': () =>
    Object.assign(new Error('query failed'), {
      driverError: { code: '22001', message: 'value too long for type character varying(255)' },
    }),
  'pg-division': () => Object.assign(new Error('division by zero'), { code: '22012' }),
};

@Controller()
class TestController {
  @Get('throw/:kind')
  throwIt(@Param('kind') kind: string): never {
    throw THROWN[kind]();
  }

  @Get('items')
  list(@Query() query: SearchQuery) {
    return { query };
  }

  @Post('items')
  create(@Body() body: ItemBody) {
    return { body };
  }

  @Get('items/:id')
  one(@Param('id') id: string) {
    return { id };
  }

  @Delete('items/:id')
  remove() {
    return { deleted: true };
  }

  @Post('only-post')
  onlyPost() {
    return { ok: true };
  }

  @Post('upload/:name')
  upload(@Body() body: unknown) {
    return { received: body };
  }

  @Post('ping')
  ping() {
    return { pong: true };
  }

  @Get('half-sent')
  halfSent(@Res() res: Response): void {
    res.status(200).write('partial');
    throw new Error('failed after the response started');
  }
}

/** Every error leaves as the envelope, as UTF-8 JSON, with a request id. */
function expectEnvelope(
  res: request.Response,
  status: number,
  description: string,
): Record<string, unknown> {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(res.headers['x-request-id']).toMatch(/\S/);
  expect(res.body).toEqual({ status: 'Error', description, more: expect.any(Object) });
  return res.body.more as Record<string, unknown>;
}

describe('AllExceptionsFilter (through configureHttpApp)', () => {
  let app: NestExpressApplication;
  let http: ReturnType<typeof request>;

  beforeAll(async () => {
    app = await createTinyHttpApp(
      { controllers: [TestController] },
      { maxBodyBytes: MAX_BODY, textBodyRoutes: [/^\/upload\/[^/]+$/] },
    );
    http = request(app.getHttpServer());
  }, APP_START_MS);
  afterAll(() => app.close());
  afterEach(() => jest.restoreAllMocks());

  describe('AppError subclasses', () => {
    it('render their status, description and more', async () => {
      const more = expectEnvelope(await http.get('/throw/conflict'), 409, 'Already exists');
      expect(more).toEqual({ id: 3 });
      expect(
        expectEnvelope(await http.get('/throw/bad-gateway'), 502, 'REMS did not answer'),
      ).toEqual({
        upstream: 'rems',
      });
      expect(
        expectEnvelope(await http.get('/throw/too-large'), 413, 'Request body too large'),
      ).toEqual({});
      expect(
        expectEnvelope(
          await http.get('/throw/validation-one'),
          400,
          'Invalid item 2: name: is required',
        ),
      ).toEqual({
        errors: [{ index: 2, field: 'name', message: 'is required' }],
      });
    });

    it('send their headers', async () => {
      const unauthorized = await http.get('/throw/unauthorized');
      expectEnvelope(unauthorized, 401, 'Invalid API key');
      expect(unauthorized.headers['www-authenticate']).toBe('ApiKey');
      const limited = await http.get('/throw/rate-limited');
      expectEnvelope(limited, 429, 'Too many requests');
      expect(limited.headers['retry-after']).toBe('30');
    });
  });

  describe("the framework's own HttpExceptions", () => {
    it('keep their status and message', async () => {
      expectEnvelope(await http.get('/throw/nest-forbidden'), 403, 'Not yours');
      expectEnvelope(await http.get('/throw/nest-not-found'), 404, 'No such dataset');
      expectEnvelope(await http.get('/throw/nest-plain'), 418, 'I am a teapot');
      expectEnvelope(await http.get('/throw/nest-array'), 422, 'first problem; second problem');
    });

    it('are not mistaken for a malformed body because their message mentions JSON', async () => {
      expectEnvelope(
        await http.get('/throw/nest-json-word'),
        400,
        'metadata must be a JSON-encoded object',
      );
    });

    it('map 413 and 415 to our sentences, and 5xx to an opaque 500', async () => {
      expectEnvelope(await http.get('/throw/nest-413'), 413, 'Request body too large');
      expectEnvelope(
        await http.get('/throw/nest-415'),
        415,
        'Request body must be application/json',
      );
      const res = await http.get('/throw/nest-502');
      const more = expectEnvelope(res, 500, 'Internal server error');
      expect(more.error_id).toMatch(UUID);
      expect(res.text).not.toContain('SELECT');
    });
  });

  describe('routing', () => {
    it('answers an unknown path with a 404 envelope', async () => {
      expect(expectEnvelope(await http.get('/nowhere'), 404, 'Not found')).toEqual({});
      expectEnvelope(await http.get('/nowhere?API_KEY=x'), 404, 'Not found');
      expectEnvelope(await http.post('/nowhere'), 404, 'Not found');
    });

    it('answers a wrong method on a known path with 405 and Allow (GET implies HEAD)', async () => {
      const res = await http.put('/items');
      const more = expectEnvelope(res, 405, 'Method not allowed');
      expect(res.headers.allow).toBe('GET, HEAD, POST');
      expect(more).toEqual({ allowed: ['GET', 'HEAD', 'POST'] });
    });

    it('computes Allow for parameterised paths and ignores the query string', async () => {
      const res = await http.patch('/items/5?API_KEY=abc');
      expectEnvelope(res, 405, 'Method not allowed');
      expect(res.headers.allow).toBe('DELETE, GET, HEAD');
    });

    it('does not add HEAD to a POST-only path', async () => {
      const res = await http.get('/only-post');
      expectEnvelope(res, 405, 'Method not allowed');
      expect(res.headers.allow).toBe('POST');
    });
  });

  describe('request bodies', () => {
    it('refuses malformed JSON with 400, without quoting the input back', async () => {
      const cut = await http
        .post('/items')
        .set('Content-Type', 'application/json')
        .send('{"name": ');
      expectEnvelope(cut, 400, 'Malformed JSON body');
      const bad = await http
        .post('/items')
        .set('Content-Type', 'application/json')
        .send('{"secret-input": x}');
      expectEnvelope(bad, 400, 'Malformed JSON body');
      expect(bad.text).not.toContain('secret-input');
    });

    it('refuses a malformed plain-text body on a text route the same way as JSON ones', async () => {
      const res = await http
        .post('/upload/hpo')
        .set('Content-Type', 'text/plain; charset=klingon')
        .send('x');
      expectEnvelope(res, 415, 'Request body must be application/json');
    });

    it('refuses a body over the limit with 413 and the limit', async () => {
      const res = await http.post('/items').send({ name: 'x'.repeat(MAX_BODY) });
      expect(expectEnvelope(res, 413, 'Request body too large')).toEqual({ limit_bytes: MAX_BODY });
    });

    it('refuses a non-JSON body with 415', async () => {
      const text = await http.post('/items').set('Content-Type', 'text/plain').send('name=x');
      expect(expectEnvelope(text, 415, 'Request body must be application/json')).toEqual({
        expected: 'application/json',
      });
      const form = await http.post('/items').type('form').send({ name: 'x' });
      expectEnvelope(form, 415, 'Request body must be application/json');
      const none = await http.post('/items').set('Content-Type', '').send('{"name":"x"}');
      expectEnvelope(none, 415, 'Request body must be application/json');
    });

    it('refuses an unsupported charset or content encoding with 415', async () => {
      const charset = await http
        .post('/items')
        .set('Content-Type', 'application/json; charset=latin1')
        .send('{"name":"x"}');
      expectEnvelope(charset, 415, 'Request body must be application/json');
      const encoding = await http
        .post('/items')
        .set('Content-Type', 'application/json')
        .set('Content-Encoding', 'compress')
        .send('{"name":"x"}');
      expectEnvelope(encoding, 415, 'Request body must be application/json');
    });

    it('refuses a body that does not inflate as its Content-Encoding says with 400', async () => {
      for (const encoding of ['gzip', 'deflate', 'br']) {
        const res = await http
          .post('/items')
          .set('Content-Type', 'application/json')
          .set('Content-Encoding', encoding)
          .send('not really compressed');
        expectEnvelope(res, 400, 'Request body does not match its Content-Encoding');
      }
    });

    it('accepts application/*+json', async () => {
      await http
        .post('/items')
        .set('Content-Type', 'application/vnd.api+json')
        .send('{"name":"x"}')
        .expect(201, { body: { name: 'x' } });
    });

    it('accepts text/plain only on the routes that declare it', async () => {
      const ok = await http
        .post('/upload/hpo')
        .set('Content-Type', 'text/plain')
        .send('line 1\nline 2');
      expect(ok.status).toBe(201);
      expect(ok.body).toEqual({ received: 'line 1\nline 2' });
      await http
        .post('/upload/hpo')
        .send({ as: 'json' })
        .expect(201, { received: { as: 'json' } });
      const xml = await http
        .post('/upload/hpo')
        .set('Content-Type', 'application/xml')
        .send('<a/>');
      expect(
        expectEnvelope(xml, 415, 'Request body must be application/json or text/plain'),
      ).toEqual({
        expected: 'application/json or text/plain',
      });
    });

    it('lets a POST without a body through', async () => {
      await http.post('/ping').expect(201, { pong: true });
    });
  });

  describe('validation', () => {
    it('names the query parameter that is wrong', async () => {
      const res = await http.get('/items').query({ page: '0' });
      const more = expectEnvelope(res, 400, 'Invalid page: must not be less than 1');
      expect(more).toEqual({ errors: [{ parameter: 'page', message: 'must not be less than 1' }] });
    });

    it('ignores unknown query parameters such as API_KEY', async () => {
      const res = await http
        .get('/items')
        .query({ page: '2', API_KEY: 'k', utm_source: 'x' })
        .expect(200);
      expect(res.body).toEqual({ query: { page: 2 } });
    });

    it('refuses unknown body fields and lists every problem at once, each by its field', async () => {
      const res = await http
        .post('/items')
        .send({ name: 'far too long a name', size: 9, colour: 'red' });
      const more = expectEnvelope(res, 400, 'Invalid input: 3 problems');
      expect(more.errors).toEqual(
        expect.arrayContaining([
          { field: 'name', message: 'must be shorter than or equal to 10 characters' },
          { field: 'size', message: 'must not be greater than 5' },
          { field: 'colour', message: 'unknown field' },
        ]),
      );
      expect(more.errors).toHaveLength(3);
    });

    it('reports nested fields with dotted paths', async () => {
      const res = await http.post('/items').send({ name: 'ok', address: { city: 12 } });
      expect(expectEnvelope(res, 400, 'Invalid address.city: must be a string')).toEqual({
        errors: [{ field: 'address.city', message: 'must be a string' }],
      });
    });
  });

  describe('unexpected errors', () => {
    it('answer 500 with an error id, without stack or SQL, and log the real error under that id', async () => {
      const logged = jest.spyOn(Logger.prototype, 'error');
      const res = await http.get('/throw/crash');
      const more = expectEnvelope(res, 500, 'Internal server error');
      expect(Object.keys(more)).toEqual(['error_id']);
      expect(more.error_id).toMatch(UUID);
      expect(res.text).not.toMatch(/SELECT|password|relation|at .*\.ts/);
      expect(logged).toHaveBeenCalledWith(
        expect.objectContaining({
          error_id: more.error_id,
          err: expect.objectContaining({ message: expect.stringContaining('SELECT password') }),
        }),
        'unhandled error',
      );
    });

    it('give every 500 its own id', async () => {
      const a = (await http.get('/throw/crash')).body.more.error_id;
      const b = (await http.get('/throw/crash')).body.more.error_id;
      expect(a).not.toBe(b);
    });

    it('handle thrown values that are not errors', async () => {
      expectEnvelope(await http.get('/throw/not-an-error'), 500, 'Internal server error');
    });

    it('close a response that had already started instead of writing a second one', async () => {
      const res = await http
        .get('/half-sent')
        .buffer(true)
        .parse((r, done) => {
          let text = '';
          r.on('data', (chunk: Buffer) => (text += chunk.toString()));
          r.on('end', () => done(null, text));
        });
      expect(res.status).toBe(200);
      expect(res.body).toBe('partial');
    });
  });

  describe('dependency failures', () => {
    it.each(['econnrefused', 'pg-shutdown', 'connection-terminated', 'wrapped-cause'])(
      '%s becomes 503 so clients retry',
      async (kind) => {
        const res = await http.get(`/throw/${kind}`);
        expect(expectEnvelope(res, 503, 'A backing service is unavailable; retry later')).toEqual(
          {},
        );
        expect(res.text).not.toContain('5432');
      },
    );
  });

  describe('database errors caused by the value sent', () => {
    it('a NUL character or an over-long value is a 400 that shows no SQL', async () => {
      const nul = await http.get('/throw/pg-nul');
      expect(expectEnvelope(nul, 400, 'Text must not contain NUL characters')).toEqual({});
      expect(nul.text).not.toContain('SELECT');
      expectEnvelope(
        await http.get('/throw/pg-too-long'),
        400,
        'A value is longer than its field allows',
      );
    });

    it('other data exceptions stay opaque 500s: they can be our own bugs', async () => {
      expectEnvelope(await http.get('/throw/pg-division'), 500, 'Internal server error');
    });
  });

  describe('request ids', () => {
    it('echoes a well-formed incoming X-Request-Id, on errors and successes', async () => {
      const error = await http.get('/nowhere').set('X-Request-Id', 'edge-proxy:42.a_b-c');
      expect(error.headers['x-request-id']).toBe('edge-proxy:42.a_b-c');
      const ok = await http.get('/items').set('X-Request-Id', 'abc123').expect(200);
      expect(ok.headers['x-request-id']).toBe('abc123');
      expect(ok.headers['content-type']).toBe('application/json; charset=utf-8');
    });

    it('replaces a malformed or oversized one with a UUID', async () => {
      const spaced = await http.get('/items').set('X-Request-Id', 'two words');
      expect(spaced.headers['x-request-id']).toMatch(UUID);
      const long = await http.get('/items').set('X-Request-Id', 'a'.repeat(129));
      expect(long.headers['x-request-id']).toMatch(UUID);
    });

    it('makes one when none is sent, even for a refused body', async () => {
      const res = await http.post('/items').set('Content-Type', 'text/plain').send('x');
      expect(res.headers['x-request-id']).toMatch(UUID);
    });
  });
});
