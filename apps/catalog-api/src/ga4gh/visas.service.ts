import { Injectable } from '@nestjs/common';
import { createHash, randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { AuditRecord, AuditService } from '../audit/audit.service';
import type { ControlledAccessGrant } from '@app/auth';
import { PassportMemo } from './passport-memo';
import { signCompact, type PublicJwk } from './visa-signing-key';
import { VisaIssuer, VisaKeys } from './visa-keys';
import { SignedVisa, VisaAccessRow, VisasRepository } from './visas.repository';

export interface Passport {
  ga4gh_passport_v1: string[];
}

const DAY_SECONDS = 86_400;
/** Bytes of visas the passport memo holds per replica (about 18 passports of 1,000 visas). */
const MEMO_BYTES = 16 * 1024 * 1024;
const RETIRED_KEYS_TTL_MS = 60_000;
/** The author of a visa in the trail: the catalog signs it when a passport is read. */
const VISA_ISSUER = { kind: 'system', name: 'visa issuer' };

/** What a visa asserts, bar `iat` and `jti` (which only say when it was signed). */
interface VisaContent {
  header: { alg: string; jku: string; typ: 'JWT'; kid: string };
  iss: string;
  sub: string;
  /** null: the access has no end, so `exp` is the default lifetime after signing. */
  exp: number | null;
  visa: ControlledAccessGrant & { by: 'dac' };
}

/**
 * GA4GH Passport v1.2 ControlledAccessGrants visas, one per access (REMS's
 * `entitlement->visa-claims` in CSCfi/rems src/clj/rems/ga4gh.clj, with `jti` added as the AAI
 * profile asks). Each visa is kept signed in ga4gh_visas under a version hashing everything it
 * says and the access's last change, and signed again only when that changes (or, for an
 * access without an end, once half its default lifetime has passed). Which visas a passport
 * holds is decided on every read from the accesses themselves, so a revoked or expired grant
 * leaves the passport at the next read, whatever is stored. The last passports served are also
 * remembered in memory, each valid while a digest of its accesses (one aggregate query per
 * read) is unchanged: a repeated read then neither reads nor signs a visa. The digest a passport
 * is remembered under is computed in the statement that read its accesses (one snapshot).
 */
@Injectable()
export class VisasService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly keys: VisaKeys,
    private readonly visas: VisasRepository,
    private readonly audit: AuditService,
  ) {}

  private readonly memo = new PassportMemo(MEMO_BYTES);

  /**
   * The person's passport: a visa per current access, and with `expired` also per ended one
   * (its `exp` in the past, as REMS does). An unknown person has an empty passport (REMS's
   * answer too), so a broker asking about every user who logs in gets no errors. The answer is
   * the passport's JSON (`Passport`), as it is remembered.
   */
  async passport(subject: string, expired: boolean): Promise<Buffer> {
    const issuer = this.keys.issuer();
    const manager = this.dataSource.manager;
    const state = await this.visas.stateOf(manager, subject, expired);
    if (state === undefined) return json({ ga4gh_passport_v1: [] });
    const now = Math.floor(Date.now() / 1000);
    const key = JSON.stringify([subject, expired]);
    const remembered = this.memo.get(key, state.digest, now);
    if (remembered !== undefined) return remembered;

    // Remembered under the digest of the rows it is made from, never under `state.digest`: an
    // access granted between the two reads would otherwise be remembered under the digest of
    // the accesses without it, which matches again once it is revoked.
    const { rows, digest } = await this.visas.accessesOf(manager, state.holder, expired);
    const lifetime = issuer.defaultLifetimeDays * DAY_SECONDS;
    const fresh: SignedVisa[] = [];
    const issued: AuditRecord[] = [];
    let renewAt = Number.POSITIVE_INFINITY;
    const jws = rows.map((row) => {
      const content = contentOf(issuer, subject, row);
      const version = versionOf(content, row);
      // A visa of an access without end is signed again once half its lifetime has passed.
      const reusable =
        row.version === version &&
        row.jws !== null &&
        (content.exp !== null || (row.visa_expires ?? 0) > now + lifetime / 2);
      const exp = reusable ? (row.visa_expires as number) : (content.exp ?? now + lifetime);
      if (content.exp === null) renewAt = Math.min(renewAt, exp - lifetime / 2);
      if (reusable) return row.jws as string;
      const jti = randomUUID();
      const signed = sign(issuer, content, now, exp, jti);
      fresh.push({ accessId: row.id, version, jws: signed, expires: exp });
      issued.push({
        actor: VISA_ISSUER,
        action: 'issue',
        objectType: 'visa',
        objectId: jti,
        change: { subject, dataset: row.accession, access_id: row.id, exp, kid: issuer.key.kid },
      });
      return signed;
    });
    if (fresh.length > 0) await this.remember(issuer.key.publicJwk, fresh, issued);
    const body = json({ ga4gh_passport_v1: jws });
    this.memo.set(key, digest, body, renewAt);
    return body;
  }

  /**
   * The public keys: the signing key, the next one, and every retired key while a visa it
   * signed has not expired. The retired keys are read at most once a minute: the route is
   * public, and a key listed a minute longer than needed does no harm (a key a replica signs
   * with is always among its configured ones).
   */
  async jwks(): Promise<{ keys: PublicJwk[] }> {
    const configured = this.keys.configuredJwks();
    const now = Date.now();
    if (this.retired === undefined || now - this.retired.at > RETIRED_KEYS_TTL_MS) {
      const keys = await this.visas.keysStillVouching(
        this.dataSource.manager,
        configured.map((key) => key.kid),
      );
      this.retired = { at: now, keys };
    }
    return { keys: [...configured, ...this.retired.keys] };
  }

  private retired?: { at: number; keys: PublicJwk[] };

  /** Keeps the visas signed, and records each in the audit trail in the same transaction. */
  private remember(key: PublicJwk, fresh: SignedVisa[], issued: AuditRecord[]): Promise<void> {
    const lastExpires = fresh.reduce((latest, visa) => Math.max(latest, visa.expires), -Infinity);
    return this.dataSource.transaction(async (manager) => {
      await this.visas.keep(manager, key, lastExpires, fresh);
      await this.audit.recordMany(manager, issued);
    });
  }
}

function json(passport: Passport): Buffer {
  return Buffer.from(JSON.stringify(passport));
}

function contentOf(issuer: VisaIssuer, subject: string, row: VisaAccessRow): VisaContent {
  // An ended access's visa expired when the access did: its last day, or when it was ended.
  const exp = row.current
    ? row.ends
    : Math.min(row.ends ?? Number.POSITIVE_INFINITY, row.changed_at);
  return {
    header: { alg: issuer.key.alg, jku: issuer.jku, typ: 'JWT', kid: issuer.key.kid },
    iss: issuer.issuer,
    sub: subject,
    exp,
    visa: {
      type: 'ControlledAccessGrants',
      value: row.accession,
      source: issuer.source,
      by: 'dac',
      asserted: row.asserted,
    },
  };
}

/** Everything the visa says and when its access last changed: equal versions, equal visas. */
function versionOf(content: VisaContent, row: VisaAccessRow): string {
  return createHash('sha256')
    .update(JSON.stringify([content, row.current, row.changed]))
    .digest('hex');
}

function sign(
  issuer: VisaIssuer,
  content: VisaContent,
  iat: number,
  exp: number,
  jti: string,
): string {
  // Members in the order REMS writes them; `jti` last.
  const claims = {
    iss: content.iss,
    sub: content.sub,
    iat,
    exp,
    ga4gh_visa_v1: content.visa,
    jti,
  };
  return signCompact(content.header, claims, issuer.key.privateKey, issuer.key.alg);
}
