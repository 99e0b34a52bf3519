import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { AccessHolder } from '../accesses/accesses.repository';
import {
  CURRENT_ACCESS_SQL as CURRENT,
  ENDED_ACCESS_SQL as ENDED,
  GRANTABLE_DATASET_SQL,
} from '../accesses/usable-access';
import { PERSON_BY_SUBJECT } from '../people/people.repository';
import type { PublicJwk } from './visa-signing-key';

/** One access a visa speaks for, with the visa stored for it (if any). Times: epoch seconds. */
export interface VisaAccessRow {
  id: number;
  accession: string;
  /** Usable now (accesses/usable-access.ts, the rule of /api/permissions). */
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

const epoch = (sql: string) => `floor(extract(epoch FROM ${sql}))::float8`;
/** Which of a holder's accesses a passport speaks for ($2: whether ended ones count). */
const PASSPORT_ACCESSES = `${GRANTABLE_DATASET_SQL} AND ((${CURRENT}) OR ($2 AND (${ENDED})))`;

/**
 * The CTE `held`: the passport's accesses of the holder that `holder` matches (an `a.`
 * condition), with every column a visa is made from. Both the digest and the visas are read
 * from it, so what a digest vouches for is what the visas were built from.
 */
const held = (holder: string, from = '') => `held AS (
  SELECT a.id, d.elu_accession AS accession, a.status, (${CURRENT}) AS current, a.granted_on,
    a.grant_expires_on, a.created_at, a.updated_at
  FROM ${from}accesses a JOIN datasets d ON d.id = a.dataset_id
  WHERE ${holder} AND ${PASSPORT_ACCESSES})`;
/** A digest of `held` (null when it is empty). */
const HELD_DIGEST = `SELECT md5(string_agg(concat_ws(':', h.id, h.accession, h.status, h.current,
    h.granted_on, h.grant_expires_on, h.created_at, h.updated_at), ',' ORDER BY h.id)) FROM held h`;
/** The digest of a passport without accesses. */
const NO_ACCESSES = 'none';

/** The accesses GA4GH visas are made from, the visas kept signed, and the keys that signed. */
@Injectable()
export class VisasRepository {
  /**
   * The holder's accesses to datasets with an accession and at least one exposure (the datasets
   * /api/permissions lists): the current ones, and with `ended` also those terminated or past
   * their last day, with the stored visas joined in; and the digest `stateOf` gives for exactly
   * these rows. One statement, so the rows and their digest come from one snapshot: a passport
   * remembered under the digest is the passport of the accesses that digest stands for.
   */
  async accessesOf(
    manager: EntityManager,
    holder: AccessHolder,
    ended: boolean,
  ): Promise<{ rows: VisaAccessRow[]; digest: string }> {
    const column = holder.kind === 'user' ? 'user_id' : 'contact_id';
    const rows = await manager.query<(VisaAccessRow & { digest: string })[]>(
      `WITH ${held(`a.${column} = $1`)}
       SELECT h.id, h.accession, h.current,
         ${epoch(`COALESCE(h.granted_on::timestamp AT TIME ZONE 'UTC', h.created_at)`)} AS asserted,
         ${epoch(`(h.grant_expires_on + 1)::timestamp AT TIME ZONE 'UTC'`)} AS ends,
         h.updated_at::text AS changed, ${epoch('h.updated_at')} AS changed_at,
         v.version, v.jws, ${epoch('v.expires_at')} AS visa_expires, (${HELD_DIGEST}) AS digest
       FROM held h LEFT JOIN ga4gh_visas v ON v.access_id = h.id
       ORDER BY h.accession, h.id`,
      [holder.id, ended],
    );
    const digest = rows[0]?.digest ?? NO_ACCESSES;
    return { rows: rows.map(({ digest: _digest, ...row }) => row), digest };
  }

  /**
   * The person with this subject and the digest `accessesOf` would give for them: one
   * statement, so an unchanged passport is known in one round trip without reading its visas.
   * Undefined when nobody has the subject.
   */
  async stateOf(
    manager: EntityManager,
    subject: string,
    ended: boolean,
  ): Promise<{ holder: AccessHolder; digest: string } | undefined> {
    const [row] = await manager.query<(AccessHolder & { digest: string | null })[]>(
      `WITH p AS (${PERSON_BY_SUBJECT}), ${held(
        `((p.kind = 'user' AND a.user_id = p.id) OR (p.kind = 'contact' AND a.contact_id = p.id))`,
        'p, ',
      )}
       SELECT p.kind, p.id, (${HELD_DIGEST}) AS digest FROM p`,
      [subject, ended],
    );
    if (row === undefined) return undefined;
    return { holder: { kind: row.kind, id: row.id }, digest: row.digest ?? NO_ACCESSES };
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
