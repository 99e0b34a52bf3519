import { HEALTH_CHECKS, HealthModule } from '@app/platform';
import { DataSource } from 'typeorm';

/** Ready when Postgres answers. */
export const CatalogHealthModule = HealthModule.forRoot({
  provide: HEALTH_CHECKS,
  inject: [DataSource],
  useFactory: (dataSource: DataSource) => [
    { name: 'database', check: async () => void (await dataSource.query('SELECT 1')) },
  ],
});
