import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { groupBy, textOrNull } from '../common/formatting';
import { SqlParams } from '../common/sql-params';
import { CATALOG_SETTINGS, CatalogSettings } from '../config/catalog.settings';
import {
  FULL_CONTACT_COLUMNS,
  FullContactRow,
  PersonRow,
  toContactExport,
  toPersonExport,
  USER_PERSON_COLUMNS,
} from '../contacts/contact.exporter';
import { contractVisible } from '../permissions/visibility.sql';
import type { Viewer } from '../permissions/viewer';

interface ContractRow {
  id: number;
  name: string | null;
  comments: string | null;
  project_id: number;
}

interface PartnerRoleRow {
  id: number;
  contract_id: number;
  partner: string;
  gdpr_roles: string[];
  comments: string | null;
}

@Injectable()
export class ContractsService {
  constructor(@Inject(CATALOG_SETTINGS) private readonly settings: CatalogSettings) {}

  /** Four queries whatever the number of contracts. */
  async list(manager: EntityManager, viewer: Viewer, projectId?: number) {
    const params = new SqlParams();
    const conditions = [contractVisible(viewer, params)];
    if (projectId !== undefined) conditions.push(`c.project_id = ${params.add(projectId)}`);
    const contracts = await manager.query<ContractRow[]>(
      `SELECT c.id, c.name, c.comments, c.project_id FROM contracts c
       WHERE ${conditions.join(' AND ')} ORDER BY c.id`,
      params.values,
    );
    const ids = [contracts.map((c) => c.id)];
    const custodians = await manager.query<(PersonRow & { contract_id: number })[]>(
      `SELECT x.contract_id, ${USER_PERSON_COLUMNS}
       FROM contract_local_custodians x JOIN users u ON u.id = x.user_id
       LEFT JOIN partners ua ON ua.id = u.affiliation_id
       WHERE x.contract_id = ANY($1::int[]) ORDER BY u.last_name, u.first_name, u.id`,
      ids,
    );
    const roles = await manager.query<PartnerRoleRow[]>(
      `SELECT r.id, r.contract_id, pa.name AS partner, r.gdpr_roles::text[] AS gdpr_roles,
         r.comments
       FROM contract_partner_roles r JOIN partners pa ON pa.id = r.partner_id
       WHERE r.contract_id = ANY($1::int[]) ORDER BY pa.name, r.id`,
      ids,
    );
    const roleContacts = await manager.query<(FullContactRow & { role_id: number })[]>(
      `SELECT x.contract_partner_role_id AS role_id, ${FULL_CONTACT_COLUMNS}
       FROM contract_partner_role_contacts x
       JOIN contract_partner_roles r ON r.id = x.contract_partner_role_id
       JOIN contacts ct ON ct.id = x.contact_id
       WHERE r.contract_id = ANY($1::int[]) ORDER BY ct.last_name, ct.first_name, ct.id`,
      ids,
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
