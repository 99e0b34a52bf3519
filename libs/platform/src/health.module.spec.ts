import { Injectable } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { AuthModule } from '@app/auth';
import type { ApiKeyResolver, Principal } from '@app/auth';
import { createTinyHttpApp } from '../../../test/support/tiny-http-app';
import { HEALTH_CHECKS, HealthCheck, HealthModule, ShutdownState } from './health.module';
import { APP_START_MS } from '../../../test/support/timeouts';

/** Knows no key at all: the health routes must be open regardless (default-deny guard installed). */
@Injectable()
class NoKeys implements ApiKeyResolver {
  resolve(): Promise<Principal | null> {
    return Promise.resolve(null);
  }
}

describe('HealthController', () => {
  let app: NestExpressApplication;
  let http: ReturnType<typeof request>;
  const state: Record<string, 'up' | 'down' | 'hang'> = {};

  const check = (name: string): HealthCheck => ({
    name,
    check: () => {
      if (state[name] === 'down')
        return Promise.reject(new Error(`${name} refused the connection`));
      if (state[name] === 'hang') return new Promise<void>(() => undefined);
      return Promise.resolve();
    },
  });

  beforeAll(async () => {
    app = await createTinyHttpApp({
      imports: [
        AuthModule.forRoot({ resolver: NoKeys }),
        HealthModule.forRoot({
          provide: HEALTH_CHECKS,
          useValue: [check('database'), check('queue')],
        }),
      ],
    });
    http = request(app.getHttpServer());
  }, APP_START_MS);
  afterAll(() => app.close());
  beforeEach(() => {
    state.database = 'up';
    state.queue = 'up';
    app.get(ShutdownState).shuttingDown = false;
  });

  it('live is 200 without a key, whatever the dependencies do', async () => {
    state.database = 'down';
    const res = await http.get('/health/live').expect(200);
    expect(res.body).toEqual({ status: 'ok' });
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
  });

  it('ready is 200 when every check answers, naming each one', async () => {
    const res = await http.get('/health/ready').set('X-API-Key', 'ignored').expect(200);
    expect(res.body).toEqual({ status: 'ok', checks: { database: 'up', queue: 'up' } });
  });

  it('ready is 503 in the envelope, naming the failing check and why', async () => {
    state.queue = 'down';
    const res = await http.get('/health/ready').expect(503);
    expect(res.body).toEqual({
      status: 'Error',
      description: 'Not ready',
      more: { checks: { database: 'up', queue: 'down: queue refused the connection' } },
    });
  });

  it('a check that hangs is timed out and reported down', async () => {
    state.database = 'hang';
    const res = await http.get('/health/ready').expect(503);
    expect(res.body.more.checks).toEqual({
      database: 'down: no answer within 2000 ms',
      queue: 'up',
    });
  });

  it('ready is 503 as soon as shutdown has started, so traffic drains', async () => {
    app.get(ShutdownState).beforeApplicationShutdown();
    const res = await http.get('/health/ready').expect(503);
    expect(res.body).toEqual({
      status: 'Error',
      description: 'Shutting down',
      more: { checks: {} },
    });
    await http.get('/health/live').expect(200);
  });

  it('answers HEAD and refuses other methods with 405', async () => {
    await http.head('/health/ready').expect(200);
    const res = await http.post('/health/live').expect(405);
    expect(res.headers.allow).toBe('GET, HEAD');
  });
});
