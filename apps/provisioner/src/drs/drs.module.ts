import { Module } from '@nestjs/common';
import { DRS_SETTINGS } from '../config/drs-settings';
import { PROVISIONER_SETTINGS, type ProvisionerSettings } from '../config/provisioner.settings';
import { DrsBytesController } from './drs-bytes.controller';
import { DrsController } from './drs.controller';
import { DrsService } from './drs.service';
import { StoredDatasets } from './stored-datasets';

/**
 * GA4GH DRS 1.5 over the stored datasets, and the bytes behind its access URLs. Its settings are
 * one group (DRS_SETTINGS), derived here once from the provisioner's: every DRS part is built
 * from that group alone.
 */
@Module({
  controllers: [DrsController, DrsBytesController],
  providers: [
    {
      provide: DRS_SETTINGS,
      useFactory: (settings: ProvisionerSettings) => settings.drsSettings,
      inject: [PROVISIONER_SETTINGS],
    },
    DrsService,
    StoredDatasets,
  ],
})
export class DrsModule {}
