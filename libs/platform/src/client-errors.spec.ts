import { Controller, Get, Module, Post, Body } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { AddressInfo } from 'node:net';
import { createTinyHttpApp } from '../../../test/support/tiny-http-app';
import { malformedRequests } from '../../../test/support/hostile-input';
import { RawHttpAnswer, sendRaw } from '../../../test/support/raw-http';
import { APP_START_MS } from '../../../test/support/timeouts';

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
  }, APP_START_MS);
  afterAll(() => app.close());

  it.each(malformedRequests('/echo'))(
    'answers $name with $status in the envelope',
    async ({ raw, status }) => {
      expectEnvelope(await sendRaw(port, raw), status);
    },
  );

  it('delivers an answer written before a broken body was read (a 405 on a GET route)', async () => {
    // The route refuses POST before reading the body; the chunk that follows is malformed.
    const answer = await sendRaw(
      port,
      'POST /ping HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
        'Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n',
    );
    expect(answer?.status).toBe(405);
    expect(answer?.headers['x-request-id']).toMatch(UUID);
    expect(JSON.parse(answer!.body.toString())).toMatchObject({ status: 'Error', more: {} });
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
