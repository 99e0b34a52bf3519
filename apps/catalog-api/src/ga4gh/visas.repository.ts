import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { AccessHolder } from '../accesses/accesses.repository';
import { PERSON_BY_SUBJECT } from '../people/people.repository';
import type { PublicJwk } from './visa-signing-key';

/** One access a visa speaks for, with the visa stored for it (if any). Times: epoch seconds. */
export interface VisaAccessRow {
  id: number;
  accession: string;
  /** Active and not past its last day (the same rule as /api/permissions). */
  current: boolean;
  /** The grant's start: its `granted_on` (UTC midnight), else when the access was recorded. */
  asserted: number;
  /** The end of the access's last day (UTC), or null when it has none. */
  ends: number | null;
  /** When the access last changed (to the microsecond, for the visa's version). */
  changed: string;
  /** `changed` in epoch seconds: when an ended access stopped at the latest. */
  changed_at: number;
  version: string | null;
  jws: string | null;
  visa_expires: number | null;
}

/** A freshly signed visa, to be kept until its access changes. */
export interface SignedVisa {
  accessId: number;
  version: string;
  jws: string;
  expires: number;
}

const TODAY = `(now() AT TIME ZONE 'UTC')::date`;
const CURRENT = `a.status = 'active' AND (a.grant_expires_on IS NULL OR a.grant_expires_on >= ${TODAY})`;
const ENDED = `a.status = 'terminated' OR (a.status = 'active' AND a.grant_expires_on < ${TODAY})`;
const epoch = (sql: string) => `floor(extract(epoch FROM ${sql}))::float8`;
/** Which of a holder's accesses a passport speaks for ($2: whether ended ones count). */
const PASSPORT_ACCESSES = `d.elu_accession IS NOT NULL
   AND EXISTS (SELECT 1 FROM exposures e WHERE e.dataset_id = d.id)
   AND ((${CURRENT}) OR ($2 AND (${ENDED})))`;

/** The accesses GA4GH visas are made from, the visas kept signed, and the keys that signed. */
@Injectable()
export class VisasRepository {
  /**
   * The holder's accesses to datasets with an accession and at least one exposure (the datasets
   * /api/permissions lists): the current ones, and with `ended` also those terminated or past
   * their last day. One indexed statement, the stored visas joined in.
   */
  accessesOf(
    manager: EntityManager,
    holder: AccessHolder,
    ended: boolean,
  ): Promise<VisaAccessRow[]> {
    const column = holder.kind === 'user' ? 'user_id' : 'contact_id';
    return manager.query<VisaAccessRow[]>(
      `SELECT a.id, d.elu_accession AS accession, (${CURRENT}) AS current,
         ${epoch(`COALESCE(a.granted_on::timestamp AT TIME ZONE 'UTC', a.created_at)`)} AS asserted,
         ${epoch(`(a.grant_expires_on + 1)::timestamp AT TIME ZONE 'UTC'`)} AS ends,
         a.updated_at::text AS changed, ${epoch('a.updated_at')} AS changed_at,
         v.version, v.jws, ${epoch('v.expires_at')} AS visa_expires
       FROM accesses a JOIN datasets d ON d.id = a.dataset_id
       LEFT JOIN ga4gh_visas v ON v.access_id = a.id
       WHERE a.${column} = $1 AND ${PASSPORT_ACCESSES}
       ORDER BY d.elu_accession, a.id`,
      [holder.id, ended],
    );
  }

  /**
   * The person with this subject and a digest of what `accessesOf` would return for them, bar
   * the stored visas (the same rows, with every column a visa is made from): one statement, so
   * an unchanged passport is known in one round trip without reading its visas. Undefined when
   * nobody has the subject.
   */
  async stateOf(
    manager: EntityManager,
    subject: string,
    ended: boolean,
  ): Promise<{ holder: AccessHolder; digest: string } | undefined> {
    const [row] = await manager.query<(AccessHolder & { digest: string | null })[]>(
      `WITH p AS (${PERSON_BY_SUBJECT})
       SELECT p.kind, p.id, (
         SELECT md5(string_agg(concat_ws(':', a.id, d.elu_accession, a.status, (${CURRENT}),
             a.granted_on, a.grant_expires_on, a.created_at, a.updated_at), ',' ORDER BY a.id))
         FROM accesses a JOIN datasets d ON d.id = a.dataset_id
         WHERE ((p.kind = 'user' AND a.user_id = p.id) OR (p.kind = 'contact' AND a.contact_id = p.id))
           AND ${PASSPORT_ACCESSES}) AS digest
       FROM p`,
      [subject, ended],
    );
    if (row === undefined) return undefined;
    return { holder: { kind: row.kind, id: row.id }, digest: row.digest ?? 'none' };
  }

  /**
   * Keeps freshly signed visas (replacing older ones of the same accesses) and records, first,
   * that `key` signed visas valid until `lastExpires`: /api/jwk lists it at least that long.
   * Skips accesses deleted meanwhile.
   */
  async keep(
    manager: EntityManager,
    key: PublicJwk,
    lastExpires: number,
    visas: SignedVisa[],
  ): Promise<void> {
    await manager.query(
      `INSERT INTO ga4gh_visa_keys (kid, public_jwk, last_expires_at) VALUES ($1, $2, to_timestamp($3))
       ON CONFLICT (kid) DO UPDATE SET public_jwk = EXCLUDED.public_jwk,
         last_expires_at = GREATEST(ga4gh_visa_keys.last_expires_at, EXCLUDED.last_expires_at)`,
      [key.kid, JSON.stringify(key), lastExpires],
    );
    await manager.query(
      `INSERT INTO ga4gh_visas (access_id, version, jws, expires_at)
       SELECT v.id, v.version, v.jws, to_timestamp(v.expires)
       FROM unnest($1::int[], $2::text[], $3::text[], $4::float8[]) AS v(id, version, jws, expires)
       WHERE EXISTS (SELECT 1 FROM accesses a WHERE a.id = v.id)
       ON CONFLICT (access_id) DO UPDATE SET version = EXCLUDED.version, jws = EXCLUDED.jws,
         expires_at = EXCLUDED.expires_at, signed_at = now()`,
      [
        visas.map((v) => v.accessId),
        visas.map((v) => v.version),
        visas.map((v) => v.jws),
        visas.map((v) => v.expires),
      ],
    );
  }

  /** Keys that signed visas not yet expired, other than those named (the configured ones). */
  async keysStillVouching(manager: EntityManager, except: string[]): Promise<PublicJwk[]> {
    const rows = await manager.query<{ public_jwk: PublicJwk }[]>(
      `SELECT public_jwk FROM ga4gh_visa_keys
       WHERE last_expires_at > now() AND NOT (kid = ANY($1::text[])) ORDER BY kid`,
      [except],
    );
    return rows.map((row) => row.public_jwk);
  }
}
