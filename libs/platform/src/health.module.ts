import {
  BeforeApplicationShutdown,
  Controller,
  DynamicModule,
  Get,
  Inject,
  Injectable,
  Module,
  Provider,
} from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ServiceUnavailableError } from '@app/errors';
import { Public } from '@app/auth';
import { answeredWithin } from './answered-within';

/** A named readiness check: resolves when the dependency answers, rejects otherwise. */
export interface HealthCheck {
  name: string;
  check(): Promise<void>;
}

export const HEALTH_CHECKS = Symbol('HEALTH_CHECKS');
const CHECK_TIMEOUT_MS = 2000;

/** Flips readiness off as soon as shutdown starts, so the load balancer stops sending traffic. */
@Injectable()
export class ShutdownState implements BeforeApplicationShutdown {
  shuttingDown = false;

  beforeApplicationShutdown(): void {
    this.shuttingDown = true;
  }
}

@ApiTags('operations')
@Controller('health')
@Public()
export class HealthController {
  constructor(
    @Inject(HEALTH_CHECKS) private readonly checks: HealthCheck[],
    private readonly shutdown: ShutdownState,
  ) {}

  /** Liveness: the process answers. Never depends on anything else, so it never flaps. */
  @ApiOperation({ summary: 'Liveness: the process answers' })
  @ApiResponse({ status: 200, description: '`{status: "ok"}`' })
  @Get('live')
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /** Readiness: every dependency answers within its time-out. */
  @ApiOperation({ summary: 'Readiness: every dependency answers' })
  @ApiResponse({ status: 200, description: '`{status: "ok", checks}`' })
  @ApiResponse({
    status: 503,
    description: 'A dependency is down, or shutdown has begun (`more.checks`)',
  })
  @Get('ready')
  async ready(): Promise<{ status: 'ok'; checks: Record<string, string> }> {
    if (this.shutdown.shuttingDown) {
      throw new ServiceUnavailableError('Shutting down', { checks: {} });
    }
    const results = await Promise.all(
      this.checks.map(async ({ name, check }) => {
        try {
          await answeredWithin(check(), CHECK_TIMEOUT_MS);
          return [name, 'up'] as const;
        } catch (error) {
          return [name, `down: ${(error as Error).message}`] as const;
        }
      }),
    );
    const checks = Object.fromEntries(results);
    if (results.some(([, state]) => state !== 'up')) {
      throw new ServiceUnavailableError('Not ready', { checks });
    }
    return { status: 'ok', checks };
  }
}

/** `/health/live` and `/health/ready`, with the checks the app provides. */
@Module({})
export class HealthModule {
  static forRoot(checks: Provider & { provide: typeof HEALTH_CHECKS }): DynamicModule {
    return {
      module: HealthModule,
      controllers: [HealthController],
      providers: [checks, ShutdownState],
    };
  }
}
