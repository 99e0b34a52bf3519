import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { generateApiKey, hashApiKey } from '@app/auth';
import { ConflictError } from '@app/errors';
import { AuditActor, AuditService } from '../audit/audit.service';
import { ENDPOINT_KEY_LENGTH } from '../auth/catalog-key.resolver';
import { ADVISORY_LOCKS } from '../common/advisory-locks';
import { DatabaseRepository } from '../database/database.repository';
import { EndpointsRepository } from '../endpoints/endpoints.repository';
import { conflictOnDuplicate } from './admin-input';
import type { CreateEndpointBody } from './admin-catalog.dto';

export interface EndpointCreated {
  id: number;
  name: string;
  url_pattern: string;
  api_key: string;
}

/** Endpoints: external catalogs that pull what is exposed to them, each with its own key. */
@Injectable()
export class EndpointsAdminService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly endpoints: EndpointsRepository,
    private readonly audit: AuditService,
    private readonly database: DatabaseRepository,
  ) {}

  /** `apiKey` is made at random here unless the caller brings one (the demo data's key file). */
  async create(
    input: CreateEndpointBody,
    actor: AuditActor,
    apiKey = generateApiKey(ENDPOINT_KEY_LENGTH),
  ): Promise<EndpointCreated> {
    const conflict = `An endpoint named "${input.name}" already exists`;
    return conflictOnDuplicate(
      () =>
        this.dataSource.transaction(async (m) => {
          await this.database.lockForTransaction(m, ADVISORY_LOCKS.endpointNames);
          if (await this.endpoints.nameTaken(m, input.name ?? ''))
            throw new ConflictError(conflict);
          const id = await this.endpoints.insert(
            m,
            input.name ?? '',
            input.url_pattern ?? '',
            hashApiKey(apiKey),
          );
          await this.audit.record(m, {
            actor,
            action: 'create',
            objectType: 'endpoint',
            objectId: id,
            change: { ...input },
          });
          return {
            id,
            name: input.name ?? '',
            url_pattern: input.url_pattern ?? '',
            api_key: apiKey,
          };
        }),
      conflict,
    );
  }
}
