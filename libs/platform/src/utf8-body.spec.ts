import { Body, Controller, HttpCode, Module, Post } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { isUtf8 } from 'node:buffer';
import type { AddressInfo } from 'node:net';
import { prng } from '../../../scripts/lib/prng';
import { createTinyHttpApp } from '../../../test/support/tiny-http-app';
import { INVALID_UTF8, withBytes } from '../../../test/support/hostile-input';
import { invalidUtf8Runs } from './utf8-body';
import { APP_START_MS } from '../../../test/support/timeouts';

@Controller()
class EchoController {
  @Post('echo')
  @HttpCode(200)
  echo(@Body() body: unknown): unknown {
    return { received: body };
  }

  @Post('text')
  @HttpCode(200)
  text(@Body() body: unknown): unknown {
    return { received: body };
  }
}

@Module({ controllers: [EchoController] })
class EchoModule {}

describe('invalidUtf8Runs', () => {
  it('finds nothing in well-formed UTF-8, whatever the script, U+FFFD included', () => {
    expect(invalidUtf8Runs(Buffer.from('plain, é, 中文, 🙂, \ufffd, \u{10ffff}'))).toEqual([]);
  });

  it.each(Object.entries(INVALID_UTF8))('finds %s where it is', (_name, bytes) => {
    const runs = invalidUtf8Runs(withBytes('ab', bytes, 'cd'));
    expect(runs.length).toBeGreaterThan(0);
    expect(runs[0].start).toBe(2);
  });

  it("agrees with Node's own validator on random bytes", () => {
    const random = prng(7);
    for (let n = 0; n < 5000; n++) {
      const bytes = Buffer.from(
        Array.from({ length: 1 + Math.floor(random() * 8) }, () => Math.floor(random() * 256)),
      );
      expect(invalidUtf8Runs(bytes).length === 0).toBe(isUtf8(bytes));
    }
  });
});

describe('request bodies that are not UTF-8', () => {
  let app: NestExpressApplication;
  let base: string;

  beforeAll(async () => {
    app = await createTinyHttpApp({ imports: [EchoModule] }, { textBodyRoutes: [/^\/text$/] });
    await app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
  }, APP_START_MS);
  afterAll(() => app.close());

  /** The bytes exactly as given (a client library would re-encode a string). */
  async function post(body: Buffer, type = 'application/json', path = '/echo') {
    const res = await fetch(base + path, {
      method: 'POST',
      headers: { 'Content-Type': type },
      body,
    });
    return { status: res.status, body: (await res.json()) as { more: { errors: unknown } } };
  }

  it.each(Object.entries(INVALID_UTF8))(
    'refuses %s in a JSON string, naming the field',
    async (_name, bytes) => {
      const res = await post(withBytes('{"items":[{"name":"ok"},{"name":"x', bytes, 'y"}]}'));
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        status: 'Error',
        description: 'Request body is not valid UTF-8',
        more: { errors: [{ parameter: 'items[1].name', message: 'is not valid UTF-8' }] },
      });
    },
  );

  it('names a field name, several fields at once, and the body when the bytes are outside strings', async () => {
    const key = await post(withBytes('{"a":{"b', [0xff], '":1}}'));
    expect(key.status).toBe(400);
    expect(key.body.more.errors).toEqual([
      { parameter: 'a.b\ufffd', message: 'field name is not valid UTF-8' },
    ]);

    const several = await post(
      Buffer.concat([
        withBytes('{"a":"', [0xc0], '","b":["ok","'),
        withBytes('', [0xfe], '"],"c":"fine"}'),
      ]),
    );
    expect(several.status).toBe(400);
    expect(several.body.more.errors).toEqual([
      { parameter: 'a', message: 'is not valid UTF-8' },
      { parameter: 'b[1]', message: 'is not valid UTF-8' },
    ]);

    const outside = await post(withBytes('{"a":1', [0xff], '}'));
    expect(outside.status).toBe(400);
    expect(outside.body.more.errors).toEqual([
      { parameter: 'body', message: 'is not valid UTF-8 (byte 6)' },
    ]);
  });

  it('takes well-formed UTF-8, an encoded U+FFFD and the \\ufffd escape as sent', async () => {
    const res = await post(Buffer.from('{"name":"é 中 🙂 \ufffd \\ufffd"}'));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ received: { name: 'é 中 🙂 \ufffd \ufffd' } });
  });

  it('refuses JSON declared in another charset (RFC 8259: JSON is UTF-8)', async () => {
    const res = await post(Buffer.from('{"a":1}', 'utf16le'), 'application/json; charset=utf-16le');
    expect(res.status).toBe(415);
    expect(res.body).toMatchObject({ status: 'Error' });
  });

  it('refuses invalid UTF-8 in a text body, naming the line', async () => {
    const res = await post(
      withBytes('first line\nsecond ', [0xe9], ' line\n'),
      'text/plain',
      '/text',
    );
    expect(res.status).toBe(400);
    expect(res.body.more.errors).toEqual([
      { parameter: 'body', message: 'is not valid UTF-8 (line 2, byte 18)' },
    ]);
    const latin1 = await post(
      Buffer.from([0x63, 0x61, 0x66, 0xe9]),
      'text/plain; charset=iso-8859-1',
      '/text',
    );
    expect(latin1.status).toBe(200);
    expect(latin1.body).toEqual({ received: 'café' });
  });
});
