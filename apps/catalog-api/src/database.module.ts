import { Inject, Injectable, Logger, Module, OnModuleInit } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { CATALOG_SETTINGS, CatalogSettings } from './config/catalog.settings';
import { runMigrationsWithLock } from './database/migration-runner';
import { buildTypeOrmOptions } from './typeorm-options';

@Injectable()
class MigrateOnStart implements OnModuleInit {
  private readonly logger = new Logger('Migrations');

  constructor(
    private readonly dataSource: DataSource,
    @Inject(CATALOG_SETTINGS) private readonly settings: CatalogSettings,
  ) {}

  async onModuleInit(): Promise<void> {
    if (!this.settings.MIGRATIONS_RUN) return;
    const applied = await runMigrationsWithLock(this.dataSource);
    this.logger.log(
      { count: applied.length, names: applied.map((m) => m.name) },
      'migrations applied',
    );
  }
}

@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      inject: [CATALOG_SETTINGS],
      useFactory: (settings: CatalogSettings) => buildTypeOrmOptions(settings),
    }),
  ],
  providers: [MigrateOnStart],
})
export class DatabaseModule {}
