// DRS in the deployed stack, with the nginx offload (issue 54, item 2): the running stack brought
// up again with docker-compose.drs.yml (DRS settings, the catalog's visa key as a file, the
// drs-offload nginx in the pod sharing the storage volume read-only), then a researcher's read:
// the demo researcher's visas from the catalog with the broker key, a passport of them, the
// dataset's DRS object (its manifest) and one file's, each read through its access URL on nginx
// by `npm run drs`'s own code (scripts/drs.mjs). The file's SHA-256 must be the one the stored
// manifest gives (.provisioner/manifest-sha256.txt, the depositor's, checked on import), and nginx's access line must show it sent those bytes after the
// API's check (the API answers X-Accel-Redirect and an empty body). Then the stack as it was.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureDrsEnvFiles, loadDemo } from '../../scripts/deploy/images.mjs';
import { podman, Stack } from '../../scripts/deploy/podman-stack.mjs';
import { get, parseDrsUri, passportOf } from '../../scripts/drs.mjs';
import { request } from './fixtures.mjs';

/** The demo researcher's subject (DEMO_RESEARCHER in apps/catalog-api/src/demo/demo-catalog.ts). */
const DEMO_RESEARCHER = 'demo-oidc-rita-researcher';
/** A dataset of the demo drop zone granted to her, imported by an earlier check. */
const DATASET = 'ELX-DS-0002';

/** manifest-sha256.txt (`<sha256>  <path>` lines) as path -> SHA-256. */
function storedManifest(file) {
  const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
  return Object.fromEntries(
    lines.map((l) => {
      const [, sha, path] = /^([0-9a-f]{64}) [ *](.+)$/.exec(l);
      return [path, sha];
    }),
  );
}

/**
 * The check, on `stack` (the working tree's image, its imports done); `drsPublish`: the host
 * address nginx is published on. Returns when the stack runs again as before (DRS off).
 */
export async function drsOffloadChecks({
  check,
  stack,
  client,
  envDir,
  volumePath,
  until,
  drsPublish,
}) {
  await check('DRS through the nginx offload: a file, SHA-256 as stored', async () => {
    const keys = ensureDrsEnvFiles(envDir);
    // The demo researcher and her grants, by the working tree's loader (idempotent).
    loadDemo(stack, envDir);
    const record = (await client.imports()).items.find(
      (r) => r.state === 'imported' && r.path?.endsWith(`/${DATASET}`),
    );
    assert.ok(record, `${DATASET} is not imported (an earlier check failed)`);
    const drsUrl = `http://${drsPublish}`;
    const drsStack = new Stack({
      project: stack.project,
      env: { ...stack.env, DRS_PUBLIC_URL: drsUrl, DRS_PUBLISH: drsPublish },
      publish: stack.publish,
      files: ['docker-compose.yml', 'docker-compose.drs.yml'],
    });
    const dir = mkdtempSync(join(tmpdir(), 'rds-drs-read-'));
    stack.down();
    try {
      await drsStack.up();
      await until(
        'DRS answering through nginx',
        async () => (await request(`${drsUrl}/ga4gh/drs/v1/service-info`)).status === 200,
        30_000,
      );
      const { ga4gh_passport_v1: visas } = await client.json(
        `${client.catalog}/api/ga4gh/permissions/${DEMO_RESEARCHER}`,
        { key: keys.GA4GH_BROKER_API_KEY },
      );
      const passport = join(dir, 'passport.jwt');
      writeFileSync(passport, passportOf(visas, DEMO_RESEARCHER));
      const read = (id, out) => {
        const uri = `drs://${drsPublish}/${id}`;
        return get({ ...parseDrsUri(uri), uri, passport, out: join(dir, out) });
      };
      // The dataset's DRS id: its storage path's project, submission and dataset id
      // (apps/provisioner/src/drs/drs-ids.ts); projects/<p>/<s>/data/raw/<d>.
      const [, project, submission, , , datasetId] = record.path.split('/');
      await read(`${project}~${submission}~${datasetId}`, 'manifest.json');
      const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
      const stored = storedManifest(
        join(volumePath(drsStack, 'storage'), record.path, '.provisioner/manifest-sha256.txt'),
      );
      const file = manifest.objects.find((o) => stored[o.path] !== undefined && o.size > 0);
      assert.ok(file, `no file of the DRS manifest is in manifest-sha256.txt`);
      const { bytes } = await read(file.id, 'file');
      const sha256 = createHash('sha256')
        .update(readFileSync(join(dir, 'file')))
        .digest('hex');
      assert.equal(sha256, stored[file.path], `${file.path}: SHA-256 not the stored manifest's`);
      // nginx sent the bytes: its access line of the access URL (token redacted), after the
      // API's check answered it (X-Accel-Redirect, an empty body).
      const access = podman(['logs', drsStack.container('drs-offload')])
        .stdout.split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l))
        .filter((l) => l.url.startsWith('/drs-bytes/[REDACTED]') && l.status === 200);
      assert.ok(
        access.some((l) => l.bytes === bytes && l.upstream_status === '200'),
        `no nginx access line of ${bytes} bytes: ${JSON.stringify(access)}`,
      );
      return `${visas.length} visas; ${file.path}: ${bytes} bytes sent by nginx on the API's X-Accel-Redirect, SHA-256 as manifest-sha256.txt's`;
    } finally {
      rmSync(dir, { recursive: true, force: true });
      drsStack.down();
      await stack.up();
    }
  });
}
