import { createHash } from 'node:crypto';
import { decodeJwt } from 'jose';
import type { DrsSettings } from '../config/drs-settings';
import { DrsError, drsUnauthorized, drsUnavailable } from './drs-errors';
import {
  CatalogRefusedLoginError,
  CatalogVisasClient,
  CatalogVisasUnavailableError,
  UnnamableSubjectError,
} from './catalog-visas.client';
import type { VerifiedVisa, VisaVerifier } from './visa-verifier';

/** What a request presents: the passports of its body, or the login token of its header. */
export interface DrsCredentials {
  passports?: string[];
  bearer?: string;
  /** Told who the caller is as soon as that is known (for the refusal audit). */
  onSubject?: (subject: string) => void;
}

/** Who is asking and the accessions they may read now. */
export interface DrsCaller {
  subject: string;
  accessions: ReadonlySet<string>;
  /** The `jti` of the catalog's visa behind each accession (what the trail names as the grant). */
  visas?: ReadonlyMap<string, string>;
}

/** Subjects (and login tokens) whose current grants are remembered at once. */
const MAX_REMEMBERED_SUBJECTS = 10_000;

/**
 * Decides who a request is and which datasets they may read. A passport's visas are verified
 * (VisaVerifier) and must all be of one person; what they claim is then checked against the
 * person's current visas as the catalog signs them (the grant check, remembered per person for
 * DRS_GRANT_CHECK_SECONDS: the bound within which a revoked grant stops access). A login token is
 * exchanged for the same visas: the catalog verifies the token and answers for its subject.
 * Either way the catalog's visas are what grants access, so "which access is usable now" is the
 * catalog's one rule (its accesses/usable-access.ts), never decided here.
 */
export class DrsAuthorizer {
  private readonly grants = new Map<
    string,
    { until: number; asked: number; answer: Promise<DrsCaller> }
  >();

  constructor(
    private readonly verifier: VisaVerifier,
    private readonly catalog: CatalogVisasClient,
    private readonly options: Pick<DrsSettings, 'maxVisas' | 'grantCheckSeconds'>,
  ) {}

  async authorize(credentials: DrsCredentials): Promise<DrsCaller> {
    const note = credentials.onSubject ?? (() => undefined);
    if (credentials.passports !== undefined && credentials.passports.length > 0) {
      return this.fromPassports(credentials.passports, note);
    }
    if (credentials.bearer !== undefined) return this.fromLogin(credentials.bearer, note);
    throw drsUnauthorized(
      'no_credentials',
      'A passport (POST body `passports`) or a login token (Authorization: Bearer) is required',
    );
  }

  private async fromPassports(
    passports: string[],
    note: (subject: string) => void,
  ): Promise<DrsCaller> {
    const visas = visasOf(passports, this.options.maxVisas);
    const verified: VerifiedVisa[] = [];
    const refusals: Record<string, number> = {};
    for (const jws of visas) {
      const result = await this.verifyOrUnavailable(jws);
      if (typeof result === 'string') refusals[result] = (refusals[result] ?? 0) + 1;
      else verified.push(result);
    }
    if (verified.length === 0) {
      throw drsUnauthorized('no_valid_visa', 'No visa of the passports is valid', { refusals });
    }
    const subjects = new Set(verified.map((visa) => visa.sub));
    if (subjects.size > 1) {
      throw drsUnauthorized('several_subjects', 'The visas name more than one person');
    }
    const [subject] = subjects;
    note(subject);
    const key = `subject:${subject}`;
    let current = await this.currentGrants(key, subject);
    // A visa signed after the remembered answer was asked for speaks of a grant that answer may
    // not know yet: asked again at once, so a new grant is as prompt as a revocation (each new
    // visa causes at most one more question; older visas, a revoked grant's, cause none).
    const unconfirmed = verified.filter((visa) => !current.accessions.has(visa.value));
    // `iat` is in whole seconds: a visa of second n may be signed up to n + 1.
    const newest = unconfirmed.reduce((max, visa) => Math.max(max, visa.iat + 1), 0) * 1000;
    if (newest > (this.grants.get(key)?.asked ?? Infinity)) {
      current = await this.currentGrants(key, subject, undefined, true);
    }
    const claimed = new Set(verified.map((visa) => visa.value));
    return {
      subject,
      accessions: new Set([...current.accessions].filter((value) => claimed.has(value))),
      visas: current.visas,
    };
  }

  private async fromLogin(token: string, note: (subject: string) => void): Promise<DrsCaller> {
    let subject: unknown;
    let exp: unknown;
    try {
      ({ sub: subject, exp } = decodeJwt(token));
    } catch {
      subject = undefined;
    }
    if (typeof subject !== 'string' || subject === '') {
      throw drsUnauthorized('bad_login', 'The login token is not a JWT naming its subject');
    }
    // Said at once, without asking the catalog: log in again.
    if (typeof exp === 'number' && exp <= Date.now() / 1000) {
      throw drsUnauthorized('login_expired', 'The login token has expired; log in again');
    }
    note(subject);
    const key = `login:${createHash('sha256').update(token).digest('base64url')}`;
    return this.currentGrants(key, subject, token);
  }

  /**
   * The accessions `subject` may read now, per the catalog (remembered as every grant check
   * is): what an access URL's read is checked against while its bytes are sent.
   */
  async accessionsOf(subject: string): Promise<ReadonlySet<string>> {
    return (await this.currentGrants(`subject:${subject}`, subject)).accessions;
  }

  /** The subject's current grants per the catalog, remembered for the grant-check time. */
  private currentGrants(
    key: string,
    subject: string,
    login?: string,
    fresh = false,
  ): Promise<DrsCaller> {
    const now = Date.now();
    const kept = this.grants.get(key);
    if (!fresh && kept !== undefined && kept.until > now) return kept.answer;
    const answer = this.askCatalog(subject, login);
    this.grants.delete(key);
    if (this.grants.size >= MAX_REMEMBERED_SUBJECTS) {
      this.grants.delete(this.grants.keys().next().value as string);
    }
    this.grants.set(key, {
      until: now + this.options.grantCheckSeconds * 1000,
      asked: now,
      answer,
    });
    // A failed answer is never remembered.
    answer.catch(() => {
      if (this.grants.get(key)?.answer === answer) this.grants.delete(key);
    });
    return answer;
  }

  private async askCatalog(subject: string, login?: string): Promise<DrsCaller> {
    let visas: string[];
    try {
      visas = await this.catalog.visasOf(subject, login);
    } catch (error) {
      if (error instanceof CatalogRefusedLoginError) {
        throw drsUnauthorized('bad_login', 'The login token was refused');
      }
      if (error instanceof UnnamableSubjectError) {
        throw drsUnauthorized('bad_subject', 'The token names no person this service can look up');
      }
      if (error instanceof CatalogVisasUnavailableError) {
        throw drsUnavailable('The catalog cannot confirm the grants now; retry later');
      }
      throw error;
    }
    const accessions = new Set<string>();
    const ids = new Map<string, string>();
    for (const jws of visas) {
      const visa = await this.verifyOrUnavailable(jws);
      if (typeof visa !== 'string' && visa.sub === subject) {
        accessions.add(visa.value);
        if (visa.jti !== undefined) ids.set(visa.value, visa.jti);
      }
    }
    return { subject, accessions, visas: ids };
  }

  private async verifyOrUnavailable(jws: string) {
    try {
      return await this.verifier.verify(jws);
    } catch {
      throw drsUnavailable("The visa issuer's keys cannot be read now; retry later");
    }
  }
}

/**
 * The visas of the passports: each entry is a GA4GH passport (a JWT whose `ga4gh_passport_v1`
 * lists visas) or a visa itself. A passport's own signature is a broker's, which this service
 * does not rely on: every visa is verified on its own. Too many visas are refused before any is.
 */
function visasOf(passports: string[], max: number): string[] {
  const visas: string[] = [];
  for (const passport of passports) {
    let claims: Record<string, unknown>;
    try {
      claims = decodeJwt(passport);
    } catch {
      throw drsUnauthorized('bad_passport', 'A passport is not a JWT');
    }
    const embedded = claims.ga4gh_passport_v1;
    if (Array.isArray(embedded)) {
      if (visas.length + embedded.length > max) throw tooManyVisas(max);
      for (const visa of embedded) if (typeof visa === 'string') visas.push(visa);
    } else if (claims.ga4gh_visa_v1 !== undefined) {
      visas.push(passport);
    } else {
      throw drsUnauthorized(
        'bad_passport',
        'A passport holds neither `ga4gh_passport_v1` nor a visa',
      );
    }
    if (visas.length > max) throw tooManyVisas(max);
  }
  return visas;
}

const tooManyVisas = (max: number) =>
  new DrsError(400, 'too_many_visas', `The passports carry more than ${max} visas`, { max });
