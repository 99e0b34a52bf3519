import { HEALTH_CHECKS, HealthModule } from '@app/platform';
import { DatabaseRepository } from '../database/database.repository';
import { schemaProblem } from '../database/schema-version';

/**
 * Ready when Postgres answers and its schema has every migration of this release: a pod started
 * before the release's migration Job finished stays out of the Service (and the rollout waits),
 * saying why in `more.checks.schema`.
 */
export const CatalogHealthModule = HealthModule.forRoot({
  provide: HEALTH_CHECKS,
  inject: [DatabaseRepository],
  useFactory: (database: DatabaseRepository) => [
    { name: 'database', check: () => database.ping() },
    {
      name: 'schema',
      check: async () => {
        const problem = schemaProblem(await database.appliedMigrations());
        if (problem !== undefined) throw new Error(problem);
      },
    },
  ],
});
