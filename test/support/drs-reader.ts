import { generateKeyPairSync } from 'node:crypto';
import { SignJWT } from 'jose';
import request from 'supertest';
import type { DataSource } from 'typeorm';
import { addUser } from '../../apps/catalog-api/test/support/integration-fixture';
import { TEST_GLOBAL_KEY } from './catalog-app';

/**
 * A DRS reader as the end-to-end files set one up: a catalog user granted a dataset, whose
 * passport a broker hands over (the catalog's visas in a JWT the broker signs).
 */

/** The catalog's current visas of `subject` (`GET /api/ga4gh/permissions/<subject>`). */
export async function catalogVisas(
  server: Parameters<typeof request>[0],
  subject: string,
): Promise<string[]> {
  const res = await request(server)
    .get(`/api/ga4gh/permissions/${subject}`)
    .set('X-API-Key', TEST_GLOBAL_KEY)
    .expect(200);
  return res.body.ga4gh_passport_v1 as string[];
}

/** A passport holding `visas`, signed by a broker's key of its own (DRS checks each visa). */
export function brokerPassport(subject: string, visas: string[]): Promise<string> {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return new SignJWT({ ga4gh_passport_v1: visas })
    .setProtectedHeader({ alg: 'ES256', typ: 'JWT' })
    .setSubject(subject)
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(privateKey);
}

/**
 * Adds the user `subject` (as `username`), exposes the datasets `exposed` (a registered dataset
 * needs an exposure to be granted) and grants the user `granted` only.
 */
export async function grantReader(
  dataSource: DataSource,
  reader: { subject: string; username: string },
  exposed: string[],
  granted: string,
): Promise<void> {
  await addUser(dataSource, reader.username, { oidcId: reader.subject });
  await dataSource.query(
    `INSERT INTO exposures (form_id, dataset_id, endpoint_id)
     SELECT 1, d.id, (SELECT min(id) FROM endpoints) FROM datasets d WHERE d.elu_accession = ANY($1)`,
    [exposed],
  );
  await dataSource.query(
    `INSERT INTO accesses (dataset_id, user_id, status, granted_on)
     SELECT d.id, u.id, 'active', now()::date FROM datasets d, users u
     WHERE d.elu_accession = $1 AND u.oidc_id = $2`,
    [granted, reader.subject],
  );
}
