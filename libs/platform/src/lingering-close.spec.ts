import { Controller, Get } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Public } from '@app/auth';
import { send } from '../../../test/robustness/support/hostile-client';
import { portOf } from '../../../test/support/incomplete-body';
import { createTinyHttpApp } from '../../../test/support/tiny-http-app';
import { APP_START_MS, REAL_IO_MS } from '../../../test/support/timeouts';

// Real threads, files or sockets: seconds on a loaded 2-core machine.
jest.setTimeout(REAL_IO_MS);

/** Larger than the socket buffers, so that a reset would cut it. */
const BIG_ANSWER = 'x'.repeat(2 * 1024 * 1024);

@Public()
@Controller('linger')
class AnswersWithoutReadingController {
  @Get('big')
  big() {
    return BIG_ANSWER;
  }
}

describe('answers written while the body is still unread', () => {
  let app: NestExpressApplication;
  let port: number;

  beforeAll(async () => {
    app = await createTinyHttpApp({ controllers: [AnswersWithoutReadingController] });
    port = await portOf(app.getHttpServer());
  }, APP_START_MS);
  afterAll(() => app.close());

  it('reach the client whole, though the connection closes and the body was never read', async () => {
    // Connection: close, a body nobody reads (not JSON on a GET), an answer of 2 MiB.
    const lost: string[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await send(port, {
        method: 'GET',
        path: '/linger/big',
        headers: { 'Content-Type': 'application/octet-stream' },
        body: Buffer.alloc(512 * 1024, 0x61),
        note: 'unread body',
      }).catch((error: Error) => ({ status: 0, body: Buffer.from(error.message) }));
      if (res.status !== 200 || res.body.length !== BIG_ANSWER.length) {
        lost.push(`${res.status}: ${res.body.length} bytes`);
      }
    }
    expect(lost).toEqual([]);
  });
});
