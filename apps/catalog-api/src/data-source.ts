import { DataSource } from 'typeorm';
import { loadCatalogSettings } from './config/catalog.settings';
import { buildTypeOrmOptions } from './typeorm-options';

/** The data source the TypeORM CLI loads (`npm run migration:generate`). */
export default new DataSource(buildTypeOrmOptions(loadCatalogSettings()));
