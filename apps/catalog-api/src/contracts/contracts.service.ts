import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { groupBy, textOrNull } from '../common/formatting';
import { CATALOG_SETTINGS, CatalogSettings } from '../config/catalog.settings';
import { toContactExport, toPersonExport } from '../contacts/contact.exporter';
import type { Viewer } from '../auth/viewer';
import { ContractsRepository } from './contracts.repository';

@Injectable()
export class ContractsService {
  constructor(
    private readonly contracts: ContractsRepository,
    @Inject(CATALOG_SETTINGS) private readonly settings: CatalogSettings,
  ) {}

  /** Four queries whatever the number of contracts. */
  async list(manager: EntityManager, viewer: Viewer, projectId?: number) {
    const { contracts, custodians, roles, roleContacts } = await this.contracts.findVisible(
      manager,
      viewer,
      projectId,
    );
    const custodiansOf = groupBy(custodians, (r) => r.contract_id);
    const rolesOf = groupBy(roles, (r) => r.contract_id);
    const contactsOf = groupBy(roleContacts, (r) => r.role_id);
    const items = contracts.map((contract) => ({
      id: contract.id,
      name: textOrNull(contract.name),
      comments: textOrNull(contract.comments),
      project_id: contract.project_id,
      local_custodians: (custodiansOf.get(contract.id) ?? []).map((row) =>
        toPersonExport(row, 'Principal_Investigator'),
      ),
      partners: (rolesOf.get(contract.id) ?? []).map((role) => ({
        partner: role.partner,
        partner_roles: role.gdpr_roles,
        comments: textOrNull(role.comments),
        contacts: (contactsOf.get(role.id) ?? []).map(toContactExport),
      })),
      source: this.settings.source,
    }));
    return { items };
  }
}
