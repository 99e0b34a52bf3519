import { Controller, Get, Inject, Res } from '@nestjs/common';
import { ApiOperation, ApiProduces, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { Registry } from 'prom-client';
import { Public } from '@app/auth';
import { METRICS_REGISTRY } from './metrics-registry';

/** Prometheus scrape endpoint. Open like /health: the ingress does not publish it. */
@ApiTags('operations')
@Controller('metrics')
@Public()
export class MetricsController {
  constructor(@Inject(METRICS_REGISTRY) private readonly registry: Registry) {}

  @ApiOperation({ summary: 'Prometheus metrics (text exposition format 0.0.4)' })
  @ApiProduces('text/plain')
  @ApiResponse({ status: 200, description: 'Metrics in Prometheus text format' })
  @Get()
  async metrics(@Res() res: Response): Promise<void> {
    const body = await this.registry.metrics();
    res.setHeader('Content-Type', this.registry.contentType);
    // end(), not send(): Express would rewrite the exact content type Prometheus negotiates on.
    res.end(body);
  }
}
