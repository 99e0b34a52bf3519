import { Inject, Injectable, Logger, Module, OnModuleInit } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { CATALOG_SETTINGS, CatalogSettings } from './config/catalog.settings';
import { migrateCatalog } from './catalog-migration';
import { assertSessionDatabase } from './database/session-database';
import { buildSessionTypeOrmOptions, buildTypeOrmOptions } from './typeorm-options';

/**
 * Before anything else uses the database: refuses a session URL that reaches a transaction-mode
 * pooler (session-database.ts), then migrates when MIGRATIONS_RUN says so.
 */
@Injectable()
class SessionWorkOnStart implements OnModuleInit {
  private readonly logger = new Logger('Migrations');

  constructor(
    private readonly dataSource: DataSource,
    @Inject(CATALOG_SETTINGS) private readonly settings: CatalogSettings,
  ) {}

  async onModuleInit(): Promise<void> {
    await assertSessionDatabase(this.settings);
    if (!this.settings.MIGRATIONS_RUN) return;
    const { migrations } = await this.migrate();
    this.logger.log({ count: migrations.length, names: migrations }, 'migrations applied');
  }

  /** On the app's pool, or behind a pooler on a data source of the database itself. */
  private async migrate() {
    const options = {
      onLockTimeout: (attempt: number, error: Error, pauseMs: number) =>
        this.logger.warn(
          { attempt, pauseMs, error: error.message },
          'migration waited too long for a lock; trying again',
        ),
    };
    if (this.settings.DATABASE_DIRECT_URL === undefined)
      return migrateCatalog(this.dataSource, options);
    const direct = new DataSource(buildSessionTypeOrmOptions(this.settings));
    await direct.initialize();
    try {
      return await migrateCatalog(direct, options);
    } finally {
      await direct.destroy();
    }
  }
}

@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      inject: [CATALOG_SETTINGS],
      useFactory: (settings: CatalogSettings) => buildTypeOrmOptions(settings),
    }),
  ],
  providers: [SessionWorkOnStart],
})
export class DatabaseModule {}
