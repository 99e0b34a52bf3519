import { Controller, Get, Injectable, Module, Param } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { AuthModule, Public } from '@app/auth';
import type { ApiKeyResolver, Principal } from '@app/auth';
import { AllExceptionsFilter } from '@app/errors';
import { MetricsModule, useHttpMetrics } from './metrics.module';
import { metricSample } from '../../../../test/support/prometheus-text';
import { APP_START_MS } from '../../../../test/support/timeouts';

@Injectable()
class NoKeys implements ApiKeyResolver {
  resolve(): Promise<Principal | null> {
    return Promise.resolve(null);
  }
}

@Controller()
class ThingsController {
  @Public()
  @Get('things/:id')
  thing(@Param('id') id: string): { id: string } {
    return { id };
  }

  @Get('secret')
  secret(): string {
    return 'never';
  }
}

@Module({
  imports: [AuthModule.forRoot({ resolver: NoKeys }), MetricsModule.forRoot({ app: 'tiny' })],
  controllers: [ThingsController],
})
class TinyModule {}

describe('HTTP metrics', () => {
  let app: NestExpressApplication;

  beforeAll(async () => {
    app = await NestFactory.create<NestExpressApplication>(TinyModule, { logger: false });
    useHttpMetrics(app);
    app.useGlobalFilters(new AllExceptionsFilter());
    await app.init();
  }, APP_START_MS);
  afterAll(() => app.close());

  it('counts requests by route template and status, errors included, and serves them openly', async () => {
    const http = request(app.getHttpServer());
    await http.get('/things/1').expect(200);
    await http.get('/things/2').expect(200);
    await http.get('/secret').expect(401);
    await http.get('/no/such/path').expect(404);

    const response = await http.get('/metrics').expect(200);
    expect(response.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = response.text;
    expect(
      metricSample(text, 'http_requests_total', {
        method: 'GET',
        route: '/things/:id',
        status: '200',
        app: 'tiny',
      }),
    ).toBe(2);
    expect(metricSample(text, 'http_requests_total', { route: '/secret', status: '401' })).toBe(1);
    expect(metricSample(text, 'http_requests_total', { route: '<unmatched>', status: '404' })).toBe(
      1,
    );
    expect(
      metricSample(text, 'http_request_duration_seconds_count', {
        route: '/things/:id',
        status: '200',
      }),
    ).toBe(2);
    // Raw URLs never become label values.
    expect(text).not.toContain('/things/1');
    expect(text).not.toContain('/no/such/path');
    expect(text).toContain('process_cpu_user_seconds_total');
  });
});
