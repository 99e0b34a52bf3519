import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { NotFoundError } from '@app/errors';

type Person = { kind: 'user'; id: number } | { kind: 'contact'; id: number };

@Injectable()
export class PermissionsService {
  /**
   * Accessions of the datasets the person (a user, else a contact, with that identity-provider
   * subject) may use: an active access that has not expired (expiring today still counts) on a
   * dataset with at least one exposure, active or deprecated.
   */
  async datasetAccessions(manager: EntityManager, oidcId: string): Promise<string[]> {
    const person = await this.findPerson(manager, oidcId);
    const column = person.kind === 'user' ? 'user_id' : 'contact_id';
    const rows = await manager.query<{ elu_accession: string }[]>(
      `SELECT DISTINCT d.elu_accession FROM accesses a JOIN datasets d ON d.id = a.dataset_id
       WHERE a.${column} = $1 AND a.status = 'active'
         AND (a.grant_expires_on IS NULL OR a.grant_expires_on >= (now() AT TIME ZONE 'UTC')::date)
         AND d.elu_accession IS NOT NULL
         AND EXISTS (SELECT 1 FROM exposures e WHERE e.dataset_id = d.id)
       ORDER BY d.elu_accession`,
      [person.id],
    );
    return rows.map((row) => row.elu_accession);
  }

  private async findPerson(manager: EntityManager, oidcId: string): Promise<Person> {
    const rows = await manager.query<{ kind: 'user' | 'contact'; id: number }[]>(
      `SELECT 'user' AS kind, id FROM users WHERE oidc_id = $1
       UNION ALL SELECT 'contact' AS kind, id FROM contacts WHERE oidc_id = $1
       ORDER BY kind DESC LIMIT 1`,
      [oidcId],
    );
    if (rows.length === 0) throw new NotFoundError('No user or contact with this identifier');
    return rows[0];
  }
}
