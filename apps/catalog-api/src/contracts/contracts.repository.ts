import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { SqlParams } from '../common/sql-params';
import { FullContactRow, PersonRow } from '../contacts/contact.exporter';
import { FULL_CONTACT_COLUMNS, USER_PERSON_COLUMNS } from '../contacts/contact.sql';
import { contractVisible } from '../visibility/visibility.sql';
import type { Viewer } from '../auth/viewer';

export interface ContractRow {
  id: number;
  name: string | null;
  comments: string | null;
  project_id: number;
}

export interface PartnerRoleRow {
  id: number;
  contract_id: number;
  partner: string;
  gdpr_roles: string[];
  comments: string | null;
}

/** Contracts with the rows of everything their export lists, each keyed by its owner. */
export interface ContractRows {
  contracts: ContractRow[];
  custodians: (PersonRow & { contract_id: number })[];
  roles: PartnerRoleRow[];
  roleContacts: (FullContactRow & { role_id: number })[];
}

/** Contracts, their local custodians and partner roles, in the caller's transaction (`manager`). */
@Injectable()
export class ContractsRepository {
  /**
   * The contracts the viewer may see (of one project when `projectId` is given), by id, and
   * their relations: four queries whatever the number of contracts.
   */
  async findVisible(
    manager: EntityManager,
    viewer: Viewer,
    projectId?: number,
  ): Promise<ContractRows> {
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
    return { contracts, custodians, roles, roleContacts };
  }

  /**
   * Ids of the contracts whose key `<project id>:<lower-cased name>` is one of `keys`, with
   * that key (contracts have no accession; an import matches them by name within a project).
   */
  withProjectAndName(
    manager: EntityManager,
    keys: string[],
  ): Promise<{ id: number; key: string }[]> {
    return manager.query<{ id: number; key: string }[]>(
      `SELECT id, project_id || ':' || lower(name) AS key FROM contracts
     WHERE project_id || ':' || lower(name) = ANY($1::text[])`,
      [keys],
    );
  }

  /** Removes the contract's partner roles (their contacts' links go with them). */
  async deletePartnerRoles(manager: EntityManager, contractId: number): Promise<void> {
    await manager.query('DELETE FROM contract_partner_roles WHERE contract_id = $1', [contractId]);
  }

  /** Adds a partner role to the contract; its id. */
  async insertPartnerRole(
    manager: EntityManager,
    contractId: number,
    partnerId: number,
    gdprRoles: string[],
    comments: string | null,
  ): Promise<number> {
    const rows = await manager.query<{ id: number }[]>(
      `INSERT INTO contract_partner_roles (contract_id, partner_id, gdpr_roles, comments)
           VALUES ($1, $2, $3::text[]::gdpr_role[], $4) RETURNING id`,
      [contractId, partnerId, gdprRoles, comments],
    );
    return rows[0].id;
  }
}
