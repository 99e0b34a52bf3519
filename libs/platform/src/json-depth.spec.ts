import { Body, Controller, Post } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Type } from 'class-transformer';
import { IsOptional, IsString, ValidateNested } from 'class-validator';
import { gzipSync } from 'node:zlib';
import request from 'supertest';
import { createTinyHttpApp } from '../../../test/support/tiny-http-app';
import { APP_START_MS } from '../../../test/support/timeouts';
import { DEFAULT_MAX_JSON_DEPTH, jsonDepthExceeds } from './json-depth';

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

describe('jsonDepthExceeds', () => {
  it('counts arrays and objects, whatever their mix', () => {
    expect(jsonDepthExceeds(Buffer.from('{"a":[{"b":[1]}]}'), 4)).toBe(false);
    expect(jsonDepthExceeds(Buffer.from('{"a":[{"b":[1]}]}'), 3)).toBe(true);
    expect(jsonDepthExceeds(Buffer.from('[[],[],[],[]]'), 2)).toBe(false);
    expect(jsonDepthExceeds('1', 0)).toBe(false);
  });

  it('ignores brackets inside strings, escaped quotes included, in any script', () => {
    const text = `{"a":"${'[{'.repeat(500)}\\"${'['.repeat(500)}","é🙂":"\\\\"}`;
    expect(jsonDepthExceeds(Buffer.from(text), 1)).toBe(false);
    expect(jsonDepthExceeds(text, 1)).toBe(false);
    expect(jsonDepthExceeds(Buffer.from('{"a":"\\\\"}'.replace('}', ',"b":[[]]}')), 2)).toBe(true);
  });

  it('answers 100 MB of nesting in one pass, without a stack', () => {
    const deep = Buffer.alloc(100 * 1024 * 1024, '[');
    expect(jsonDepthExceeds(deep, 1_000_000_000)).toBe(false);
    expect(jsonDepthExceeds(deep, 64)).toBe(true);
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
