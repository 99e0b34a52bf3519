export type PersonKind = 'user' | 'contact';

/** A user or contact as person matching sees it. */
export interface PersonRecord {
  kind: PersonKind;
  id: number;
  oidcId: string | null;
  email: string | null;
  firstName: string;
  lastName: string;
}

export type Resolution =
  | { outcome: 'match'; person: PersonRecord; via: 'subject' | 'email' }
  | { outcome: 'create' }
  | { outcome: 'conflict'; reason: string };

function emailKey(email: string): string {
  return email.trim().toLowerCase();
}

/**
 * Matches identity-provider accounts to catalog people (spec §4), over a set of records loaded
 * beforehand: user by subject, then contact by subject, then by email (user, then contact),
 * an email match counting only when that record has no other subject; otherwise a new contact.
 * Two records sharing the email make the match ambiguous: a conflict, never a guess.
 * Records added or changed while a batch is processed are fed back with `put`.
 */
export class PersonDirectory {
  private readonly records = new Map<string, PersonRecord>();

  constructor(records: Iterable<PersonRecord> = []) {
    for (const record of records) this.put(record);
  }

  put(record: PersonRecord): void {
    this.records.set(`${record.kind}:${record.id}`, record);
  }

  resolve(subject: string, email: string | null): Resolution {
    const all = [...this.records.values()];
    for (const kind of ['user', 'contact'] as const) {
      const bySubject = all.find((r) => r.kind === kind && r.oidcId === subject);
      if (bySubject) return { outcome: 'match', person: bySubject, via: 'subject' };
    }
    if (email === null || email.trim() === '') return { outcome: 'create' };
    const key = emailKey(email);
    const byEmail = all
      .filter((r) => r.email !== null && emailKey(r.email) === key)
      .sort((a, b) => (a.kind === b.kind ? a.id - b.id : a.kind === 'user' ? -1 : 1));
    if (byEmail.length > 1) {
      const holders = byEmail.map((r) => `${r.kind} ${r.id}`).join(', ');
      return {
        outcome: 'conflict',
        reason: `${byEmail.length} records share the email ${email} (${holders})`,
      };
    }
    const [only] = byEmail;
    if (only !== undefined && only.oidcId === null)
      return { outcome: 'match', person: only, via: 'email' };
    return { outcome: 'create' };
  }
}
