import { Inject, Injectable } from '@nestjs/common';
import { CompactSign, calculateJwkThumbprint, compactVerify, exportJWK, type JWK } from 'jose';
import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { CATALOG_SETTINGS, CatalogSettings } from '../config/catalog.settings';

/** What a checkpoint asserts: the chain reached `seq` with `hash` (hex) at `at`. */
export interface CheckpointClaims {
  seq: string;
  hash: string;
  at: string | null;
  /** `prune`: the entries up to `seq` were deleted; `export`: the head an export was cut at. */
  purpose: 'prune' | 'export';
  /** When it was signed (ISO 8601). */
  signed_at: string;
}

export const CHECKPOINT_TYPE = 'audit-checkpoint+jws';

/**
 * The key that signs the trail's checkpoints (AUDIT_SIGNING_KEY_FILE), read once at start:
 * Ed25519 (EdDSA) or EC P-256 (ES256), so an auditor verifies with the public half alone.
 */
@Injectable()
export class AuditSigner {
  private readonly key?: { privateKey: KeyObject; publicKey: KeyObject; alg: string };
  private publicJwk?: JWK & { kid: string };

  constructor(@Inject(CATALOG_SETTINGS) settings: CatalogSettings) {
    const file = settings.AUDIT_SIGNING_KEY_FILE;
    if (file === undefined) return;
    let privateKey: KeyObject;
    try {
      privateKey = createPrivateKey(readFileSync(file));
    } catch (error) {
      throw new Error(
        `AUDIT_SIGNING_KEY_FILE (${file}) is not a readable private key: ${(error as Error).message}`,
      );
    }
    const curve = privateKey.asymmetricKeyDetails?.namedCurve;
    const alg =
      privateKey.asymmetricKeyType === 'ed25519'
        ? 'EdDSA'
        : privateKey.asymmetricKeyType === 'ec' && curve === 'prime256v1'
          ? 'ES256'
          : undefined;
    if (alg === undefined) {
      throw new Error(`AUDIT_SIGNING_KEY_FILE (${file}) must be an Ed25519 or EC P-256 key`);
    }
    this.key = { privateKey, publicKey: createPublicKey(privateKey), alg };
  }

  get enabled(): boolean {
    return this.key !== undefined;
  }

  /** The public key as a JWK with its RFC 7638 thumbprint as `kid` (what exports carry). */
  async jwk(): Promise<JWK & { kid: string }> {
    const key = this.required();
    if (this.publicJwk === undefined) {
      const jwk = await exportJWK(key.publicKey);
      this.publicJwk = { ...jwk, alg: key.alg, use: 'sig', kid: await calculateJwkThumbprint(jwk) };
    }
    return this.publicJwk;
  }

  async sign(claims: CheckpointClaims): Promise<{ jws: string; kid: string }> {
    const key = this.required();
    const { kid } = await this.jwk();
    const jws = await new CompactSign(new TextEncoder().encode(JSON.stringify(claims)))
      .setProtectedHeader({ alg: key.alg, kid, typ: CHECKPOINT_TYPE })
      .sign(key.privateKey);
    return { jws, kid };
  }

  /** The claims of a checkpoint this key signed; throws when the signature does not verify. */
  async verify(jws: string): Promise<CheckpointClaims> {
    const key = this.required();
    const { payload } = await compactVerify(jws, key.publicKey, { algorithms: [key.alg] });
    return JSON.parse(new TextDecoder().decode(payload)) as CheckpointClaims;
  }

  private required() {
    if (this.key === undefined) {
      throw new Error('AUDIT_SIGNING_KEY_FILE is not set: the trail has no signing key');
    }
    return this.key;
  }
}
