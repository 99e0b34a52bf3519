import { Controller, Get, Module, Post, Body } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { AddressInfo } from 'node:net';
import { createTinyHttpApp } from '../../../test/support/tiny-http-app';
import { RawHttpAnswer, sendRaw } from '../../../test/support/raw-http';

@Controller()
class EchoController {
  @Get('ping')
  ping(): { pong: boolean } {
    return { pong: true };
  }

  @Post('echo')
  echo(@Body() body: unknown): unknown {
    return body;
  }
}

@Module({ controllers: [EchoController] })
class EchoModule {}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function expectEnvelope(answer: RawHttpAnswer | undefined, status: number): void {
  expect(answer?.status).toBe(status);
  expect(answer?.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(answer?.headers['x-request-id']).toMatch(UUID);
  expect(answer?.headers.connection).toBe('close');
  const envelope = JSON.parse(answer!.body.toString()) as Record<string, unknown>;
  expect(envelope).toEqual({ status: 'Error', description: expect.any(String), more: {} });
}

describe('requests refused by the HTTP parser', () => {
  let app: NestExpressApplication;
  let port: number;

  beforeAll(async () => {
    app = await createTinyHttpApp({ imports: [EchoModule] });
    await app.listen(0, '127.0.0.1');
    port = (app.getHttpServer().address() as AddressInfo).port;
  });
  afterAll(() => app.close());

  it('answers oversized headers with 431 in the envelope, with a request id', async () => {
    const flood = Array.from(
      { length: 2000 },
      (_, i) => `X-Flood-${i}: ${'v'.repeat(10)}\r\n`,
    ).join('');
    expectEnvelope(await sendRaw(port, `GET /ping HTTP/1.1\r\nHost: x\r\n${flood}\r\n`), 431);
    expectEnvelope(
      await sendRaw(port, `GET /ping HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`),
      431,
    );
    expectEnvelope(
      await sendRaw(port, `GET /ping?${'q'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`),
      431,
    );
  });

  it.each([
    ['a request line that is not HTTP', 'GARBAGE\r\n\r\n'],
    ['an unknown method', 'BREW /ping HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['a space in the target', 'GET /pi ng HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['a NUL in the request line', 'GET /ping\u0000 HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['an invalid version', 'GET /ping HTTP/1.x\r\nHost: x\r\n\r\n'],
    ['a header name with a space', 'GET /ping HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n'],
    ['a header line without a colon', 'GET /ping HTTP/1.1\r\nHost: x\r\nNoColon\r\n\r\n'],
    [
      'a control character in a header value',
      'GET /ping HTTP/1.1\r\nHost: x\r\nX-A: a\u0001b\r\n\r\n',
    ],
    [
      'both Content-Length and Transfer-Encoding',
      'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n{}',
    ],
    [
      'a malformed chunk size',
      'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n',
    ],
    [
      'two Content-Length values',
      'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}',
    ],
  ])('answers %s with 400 in the envelope', async (_name, raw) => {
    expectEnvelope(await sendRaw(port, raw), 400);
  });

  it('leaves well-formed requests to the app, and still answers them after refusing others', async () => {
    await sendRaw(port, 'GARBAGE\r\n\r\n');
    const answer = await sendRaw(
      port,
      'GET /ping HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
    );
    expect(answer?.status).toBe(200);
    expect(JSON.parse(answer!.body.toString())).toEqual({ pong: true });
  });
});
