import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { NotFoundError } from '@app/errors';
import { AuditActor, AuditService } from '../audit/audit.service';
import { DatasetsRepository } from '../datasets/datasets.repository';

/** A dataset's publishing flags that an admin sets (the FAIR Data Point's VP tag). */
@Injectable()
export class DatasetsAdminService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly datasets: DatasetsRepository,
    private readonly audit: AuditService,
  ) {}

  /** `ref`: the accession, else the exact title. */
  async setVpDiscoverable(ref: string, discoverable: boolean, actor: AuditActor) {
    return this.dataSource.transaction(async (m) => {
      const changed = await this.datasets.setVpDiscoverable(m, ref, discoverable);
      if (changed === undefined) throw new NotFoundError(`No dataset ${ref}`);
      await this.audit.record(m, {
        actor,
        action: 'set-vp-discoverable',
        objectType: 'dataset',
        objectId: changed.id,
        change: { vp_discoverable: discoverable },
      });
      return { accession: changed.accession, vp_discoverable: discoverable };
    });
  }
}
