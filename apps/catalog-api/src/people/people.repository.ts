import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { AuditActor, AuditRecord } from '../audit/audit.service';
import { ADVISORY_LOCKS } from '../common/advisory-locks';
import { PersonDirectory, PersonKind, PersonRecord } from './person-directory';

/** What the identity provider (or an access request) says about a person. */
export interface IdentityFacts {
  subject: string;
  /** null: unknown, keep what is stored. */
  firstName: string | null;
  lastName: string | null;
  email: string | null;
}

/** The columns' sizes: longer identity-provider values are cut rather than failing the write. */
const NAME_MAX = 150;
const EMAIL_MAX = 254;

interface PersonRow {
  kind: PersonKind;
  id: number;
  oidc_id: string | null;
  email: string | null;
  first_name: string;
  last_name: string;
}

const TABLE: Record<PersonKind, string> = { user: 'users', contact: 'contacts' };

/**
 * The person with the identity-provider subject $1 (`kind`, `id`): the user, else the contact;
 * no row when neither exists. A fragment, so a statement can resolve the person in the same
 * round trip (GA4GH visas).
 */
export const PERSON_BY_SUBJECT = `SELECT 'user' AS kind, id FROM users WHERE oidc_id = $1
  UNION ALL SELECT 'contact' AS kind, id FROM contacts WHERE oidc_id = $1
  ORDER BY kind DESC LIMIT 1`;

/**
 * Reads and writes the people (users and contacts) that person matching works on. Meant to run
 * inside the caller's transaction: `lockSubjects` first, then `load`, so that two deliveries
 * about the same person are handled one after the other and each sees the other's result.
 */
@Injectable()
export class PeopleRepository {
  /**
   * Transaction-scoped advisory locks on these subjects, taken in sorted order so two batches
   * naming the same people cannot deadlock.
   */
  async lockSubjects(manager: EntityManager, subjects: Iterable<string>): Promise<void> {
    const sorted = [...new Set(subjects)].sort();
    if (sorted.length === 0) return;
    // The sorted subquery feeds the aggregate in order, so the locks are taken in that order.
    await manager.query(
      `SELECT count(pg_advisory_xact_lock($1::int, hashtext(s)))
       FROM (SELECT s FROM unnest($2::text[]) AS s ORDER BY s) AS ordered`,
      [ADVISORY_LOCKS.personSubject, sorted],
    );
  }

  /** Every user and contact with one of these subjects or (case-insensitively) emails. */
  async load(
    manager: EntityManager,
    subjects: string[],
    emails: string[],
  ): Promise<PersonDirectory> {
    const lowered = [...new Set(emails.map((e) => e.trim().toLowerCase()))];
    const select = (kind: PersonKind) =>
      `SELECT '${kind}' AS kind, id, oidc_id, email, first_name, last_name FROM ${TABLE[kind]}
       WHERE oidc_id = ANY($1::text[]) OR lower(btrim(email)) = ANY($2::text[])`;
    const rows = await manager.query<PersonRow[]>(
      `${select('user')} UNION ALL ${select('contact')}`,
      [subjects, lowered],
    );
    return new PersonDirectory(rows.map(toRecord));
  }

  /**
   * Brings a matched record in line with the facts (names and email only where known) and
   * sets its subject. Returns the updated record, or null when nothing changed.
   */
  async update(
    manager: EntityManager,
    person: PersonRecord,
    facts: IdentityFacts,
  ): Promise<PersonRecord | null> {
    const next: PersonRecord = {
      ...person,
      oidcId: facts.subject,
      firstName: facts.firstName === null ? person.firstName : cut(facts.firstName, NAME_MAX),
      lastName: facts.lastName === null ? person.lastName : cut(facts.lastName, NAME_MAX),
      email: facts.email === null ? person.email : cut(facts.email, EMAIL_MAX),
    };
    if (
      next.oidcId === person.oidcId &&
      next.firstName === person.firstName &&
      next.lastName === person.lastName &&
      next.email === person.email
    ) {
      return null;
    }
    await manager.query(
      `UPDATE ${TABLE[person.kind]} SET oidc_id = $2, first_name = $3, last_name = $4, email = $5,
         updated_at = now() WHERE id = $1`,
      [person.id, next.oidcId, next.firstName, next.lastName, next.email],
    );
    return next;
  }

  /** The user with this subject, else the contact with it; undefined when neither exists. */
  async findBySubject(
    manager: EntityManager,
    subject: string,
  ): Promise<{ kind: PersonKind; id: number } | undefined> {
    const rows = await manager.query<{ kind: PersonKind; id: number }[]>(PERSON_BY_SUBJECT, [
      subject,
    ]);
    return rows[0];
  }

  /** A new contact of type Other for a person the catalog did not know. */
  async createContact(manager: EntityManager, facts: IdentityFacts): Promise<PersonRecord> {
    const [contact] = await this.createContacts(manager, [facts]);
    return contact;
  }

  /** New contacts of type Other for distinct subjects, in one statement, in the order given. */
  async createContacts(manager: EntityManager, facts: IdentityFacts[]): Promise<PersonRecord[]> {
    if (facts.length === 0) return [];
    const records = facts.map((f) => newContact(f, 0));
    const rows = await manager.query<{ id: number; oidc_id: string }[]>(
      `INSERT INTO contacts (first_name, last_name, email, oidc_id, type)
       SELECT first_name, last_name, email, oidc_id, 'Other'
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[])
         AS v(first_name, last_name, email, oidc_id)
       RETURNING id, oidc_id`,
      [
        records.map((r) => r.firstName),
        records.map((r) => r.lastName),
        records.map((r) => r.email),
        records.map((r) => r.oidcId),
      ],
    );
    const ids = new Map(rows.map((row) => [row.oidc_id, row.id]));
    return records.map((record) => ({ ...record, id: ids.get(record.oidcId as string) as number }));
  }
}

/** The record `createContacts` stores for these facts (with the given id). */
export function newContact(facts: IdentityFacts, id: number): PersonRecord {
  return {
    kind: 'contact',
    id,
    oidcId: facts.subject,
    email: facts.email === null ? null : cut(facts.email, EMAIL_MAX),
    firstName: cut(facts.firstName ?? '', NAME_MAX),
    lastName: cut(facts.lastName ?? '', NAME_MAX),
  };
}

/** An audit entry for a person this repository created (before = null) or changed. */
export function personAudit(
  actor: AuditActor,
  before: PersonRecord | null,
  after: PersonRecord,
): AuditRecord {
  const view = (p: PersonRecord) => ({
    first_name: p.firstName,
    last_name: p.lastName,
    email: p.email,
    oidc_id: p.oidcId,
  });
  return {
    actor,
    action: before === null ? 'create' : 'update',
    objectType: after.kind,
    objectId: after.id,
    change: before === null ? view(after) : { before: view(before), after: view(after) },
  };
}

function toRecord(row: PersonRow): PersonRecord {
  return {
    kind: row.kind,
    id: row.id,
    oidcId: row.oidc_id,
    email: row.email,
    firstName: row.first_name,
    lastName: row.last_name,
  };
}

function cut(value: string, max: number): string {
  const trimmed = value.trim();
  return trimmed.length > max ? trimmed.slice(0, max) : trimmed;
}
