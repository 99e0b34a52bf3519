import { HEALTH_CHECKS, HealthModule } from '@app/platform';
import { DatabaseRepository } from '../database/database.repository';

/** Ready when Postgres answers. */
export const CatalogHealthModule = HealthModule.forRoot({
  provide: HEALTH_CHECKS,
  inject: [DatabaseRepository],
  useFactory: (database: DatabaseRepository) => [
    { name: 'database', check: () => database.ping() },
  ],
});
