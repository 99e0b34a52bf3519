import { Inject, Injectable } from '@nestjs/common';
import { readFileSync } from 'node:fs';
import { ServiceUnavailableError } from '@app/errors';
import { CATALOG_SETTINGS, CatalogSettings } from '../config/catalog.settings';
import { PublicJwk, readVisaKey, VisaSigningKey } from './visa-signing-key';

/** The signing key, the issuer names that go into every visa, and the key to publish next. */
export interface VisaIssuer {
  key: VisaSigningKey & { privateKey: NonNullable<VisaSigningKey['privateKey']> };
  /** `iss`: the catalog's public URL (CATALOG_SOURCE). */
  issuer: string;
  /** `jku`: where the public keys are, <CATALOG_SOURCE>/api/jwk. */
  jku: string;
  /** `ga4gh_visa_v1.source`: the granting institute (GA4GH_VISA_SOURCE, else the issuer). */
  source: string;
  /** Days until `exp` of a visa whose access has no end date. */
  defaultLifetimeDays: number;
}

const DISABLED =
  'GA4GH visas are not enabled: set GA4GH_VISA_KEY_FILE to a signing key (docs/integrations.md)';

/**
 * The visa keys, read once at start from the files the settings name (a Kubernetes Secret
 * mounted as files, or .data/ with `npm start`); a key that cannot be read or does not fit
 * GA4GH_VISA_ALGORITHM stops the start-up with a sentence naming the file.
 */
@Injectable()
export class VisaKeys {
  private readonly issuerConfig?: VisaIssuer;
  private readonly next?: VisaSigningKey;

  constructor(@Inject(CATALOG_SETTINGS) settings: CatalogSettings) {
    const alg = settings.GA4GH_VISA_ALGORITHM;
    if (settings.GA4GH_VISA_NEXT_KEY_FILE !== undefined) {
      this.next = readKeyFile(settings.GA4GH_VISA_NEXT_KEY_FILE, alg, 'GA4GH_VISA_NEXT_KEY_FILE');
    }
    const file = settings.GA4GH_VISA_KEY_FILE;
    if (file === undefined) return;
    if (settings.CATALOG_SOURCE === undefined) {
      throw new Error('GA4GH_VISA_KEY_FILE needs CATALOG_SOURCE: the public URL visas name');
    }
    const key = readKeyFile(file, alg, 'GA4GH_VISA_KEY_FILE');
    if (key.privateKey === undefined) {
      throw new Error(`GA4GH_VISA_KEY_FILE (${file}) holds a public key; it must be private`);
    }
    if (this.next?.kid === key.kid) this.next = undefined;
    this.issuerConfig = {
      key: { ...key, privateKey: key.privateKey },
      issuer: settings.source,
      jku: `${settings.source}/api/jwk`,
      source: settings.GA4GH_VISA_SOURCE ?? settings.source,
      defaultLifetimeDays: settings.GA4GH_VISA_DEFAULT_LIFETIME_DAYS,
    };
  }

  get enabled(): boolean {
    return this.issuerConfig !== undefined;
  }

  /** The signing configuration; a 503 in the envelope when no key is configured. */
  issuer(): VisaIssuer {
    if (this.issuerConfig === undefined) throw new ServiceUnavailableError(DISABLED);
    return this.issuerConfig;
  }

  /** The configured public keys: the signing key, then the next one when there is one. */
  configuredJwks(): PublicJwk[] {
    const signing = this.issuer().key.publicJwk;
    return this.next === undefined ? [signing] : [signing, this.next.publicJwk];
  }
}

function readKeyFile(path: string, alg: CatalogSettings['GA4GH_VISA_ALGORITHM'], name: string) {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new Error(`${name}: cannot read ${path} (${(error as NodeJS.ErrnoException).code})`);
  }
  return readVisaKey(text, alg, `${name} (${path})`);
}
