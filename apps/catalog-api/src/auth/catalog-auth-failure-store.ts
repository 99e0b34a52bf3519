import type { Provider } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AUTH_FAILURE_STORE, PostgresAuthFailuresRepository } from '@app/auth';

/** Failed authentications are counted in the catalog's database (migration AuthFailures). */
export const catalogAuthFailureStore: Provider = {
  provide: AUTH_FAILURE_STORE,
  useFactory: (dataSource: DataSource) =>
    new PostgresAuthFailuresRepository(dataSource, '"auth_failures"'),
  inject: [DataSource],
};
