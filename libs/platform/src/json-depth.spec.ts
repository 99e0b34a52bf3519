import { Body, Controller, Post } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Type } from 'class-transformer';
import { IsOptional, IsString, ValidateNested } from 'class-validator';
import { gzipSync } from 'node:zlib';
import request from 'supertest';
import { createTinyHttpApp } from '../../../test/support/tiny-http-app';
import { APP_START_MS } from '../../../test/support/timeouts';
import { DEFAULT_MAX_JSON_DEPTH, jsonLimitPassed } from './json-depth';

const deeperThan = (text: Uint8Array | string, maxDepth: number) =>
  jsonLimitPassed(text, { maxDepth, maxObjects: Infinity }) === 'depth';

class Inner {
  @IsOptional()
  @ValidateNested()
  @Type(() => Inner)
  inner?: Inner;

  @IsOptional()
  @IsString()
  note?: string;
}

class Outer {
  @IsString()
  name!: string;

  @IsOptional()
  @ValidateNested()
  @Type(() => Inner)
  inner?: Inner;
}

@Controller()
class DeepController {
  @Post('dto')
  dto(@Body() body: Outer) {
    return { name: body.name };
  }

  @Post('raw')
  raw(@Body() body: unknown) {
    return { type: typeof body };
  }
}

/** `{"inner":{"inner":…}}` `levels` deep, inside a valid DTO body. */
const nestedObjects = (levels: number) =>
  `{"name":"x","inner":${'{"inner":'.repeat(levels - 1)}{}${'}'.repeat(levels - 1)}}`;
const nestedArrays = (levels: number) =>
  `{"name":"x","inner":{"note":${'['.repeat(levels)}${']'.repeat(levels)}}}`;

describe('jsonLimitPassed', () => {
  it('counts arrays and objects, whatever their mix', () => {
    expect(deeperThan(Buffer.from('{"a":[{"b":[1]}]}'), 4)).toBe(false);
    expect(deeperThan(Buffer.from('{"a":[{"b":[1]}]}'), 3)).toBe(true);
    expect(deeperThan(Buffer.from('[[],[],[],[]]'), 2)).toBe(false);
    expect(deeperThan('1', 0)).toBe(false);
  });

  it('ignores brackets inside strings, escaped quotes included, in any script', () => {
    const text = `{"a":"${'[{'.repeat(500)}\\"${'['.repeat(500)}","é🙂":"\\\\"}`;
    expect(deeperThan(Buffer.from(text), 1)).toBe(false);
    expect(deeperThan(text, 1)).toBe(false);
    expect(deeperThan(Buffer.from('{"a":"\\\\"}'.replace('}', ',"b":[[]]}')), 2)).toBe(true);
  });

  it('counts every array and object, nested or not, and none inside strings', () => {
    const limits = { maxDepth: 64, maxObjects: 4 };
    expect(jsonLimitPassed('{"items":[{},{}]}', limits)).toBeUndefined();
    expect(jsonLimitPassed('{"items":[{},{},[]]}', limits)).toBe('objects');
    expect(jsonLimitPassed('{"items":["{}{}{}{}"]}', limits)).toBeUndefined();
  });

  it('answers 100 MB of nesting in one pass, without a stack', () => {
    const deep = Buffer.alloc(100 * 1024 * 1024, '[');
    expect(deeperThan(deep, 1_000_000_000)).toBe(false);
    expect(deeperThan(deep, 64)).toBe(true);
  });
});

describe('deeply nested JSON bodies (configureHttpApp)', () => {
  let app: NestExpressApplication;
  let http: ReturnType<typeof request>;

  beforeAll(async () => {
    app = await createTinyHttpApp({ controllers: [DeepController] }, { maxBodyBytes: 1 << 20 });
    http = request(app.getHttpServer());
  }, APP_START_MS);
  afterAll(() => app.close());

  const post = (path: string, body: string | Buffer, encoding?: string) => {
    // Sent as the bytes given: superagent would serialise a Buffer as JSON.
    const req = http
      .post(path)
      .set('Content-Type', 'application/json')
      .serialize((raw: unknown) => raw as string);
    return (encoding ? req.set('Content-Encoding', encoding) : req).send(body);
  };

  it.each([
    ['objects in a DTO', '/dto', nestedObjects(10_000)],
    ['arrays in a DTO', '/dto', nestedArrays(10_000)],
    ['arrays on a route without a DTO', '/raw', '['.repeat(10_000) + ']'.repeat(10_000)],
    ['an unclosed nest', '/dto', '{"name":"x","inner":' + '{"inner":'.repeat(10_000)],
  ])('refuses %s past the limit with a 400 in the envelope', async (_what, path, body) => {
    const res = await post(path, body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      status: 'Error',
      description: `JSON body is nested deeper than ${DEFAULT_MAX_JSON_DEPTH} levels`,
      more: { max_depth: DEFAULT_MAX_JSON_DEPTH },
    });
  });

  it('refuses it after inflation too', async () => {
    const res = await post('/dto', gzipSync(nestedObjects(50_000)), 'gzip');
    expect(res.status).toBe(400);
    expect(res.body.more).toEqual({ max_depth: DEFAULT_MAX_JSON_DEPTH });
  });

  it('accepts bodies at the limit, and brackets in strings at any count', async () => {
    // The body object is level 1, so the DTO's inner chain may take the remaining levels.
    await post('/dto', nestedObjects(DEFAULT_MAX_JSON_DEPTH - 1)).expect(201, { name: 'x' });
    const brackets = JSON.stringify({ name: 'x', inner: { note: '[{'.repeat(50_000) } });
    await post('/dto', brackets).expect(201, { name: 'x' });
  });
});

describe('JSON bodies with too many arrays and objects (configureHttpApp)', () => {
  let app: NestExpressApplication;

  beforeAll(async () => {
    app = await createTinyHttpApp(
      { controllers: [DeepController] },
      { maxBodyBytes: 1 << 20, maxJsonObjects: 1000 },
    );
  }, APP_START_MS);
  afterAll(() => app.close());

  it('refuses them with a 400 before parsing, and takes the limit itself', async () => {
    const records = (n: number) => `{"name":"x","inner":{"note":[${Array(n).fill('{}').join()}]}}`;
    const refused = await request(app.getHttpServer())
      .post('/raw')
      .set('Content-Type', 'application/json')
      .send(records(999));
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({
      status: 'Error',
      description: 'JSON body holds more than 1000 arrays and objects',
      more: { max_objects: 1000 },
    });
    await request(app.getHttpServer())
      .post('/raw')
      .set('Content-Type', 'application/json')
      .send(records(997))
      .expect(201);
  });
});
