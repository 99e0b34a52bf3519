import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const ROOT = join(__dirname, '..');

interface Bom {
  bomFormat: string;
  specVersion: string;
  metadata: { component: { name: string; version: string } };
  components: { group?: string; name: string; version: string; purl?: string }[];
}

/**
 * `npm run sbom`: a CycloneDX SBOM of what the image installs (`npm install --omit=dev`, as the
 * Dockerfile's runtime stage does), made by @cyclonedx/cyclonedx-npm from the lock and checked
 * against the CycloneDX schema by the tool itself (--validate). Run here with its output elsewhere.
 */
it('writes a CycloneDX SBOM of the production dependencies, without the dev ones', async () => {
  const script = (
    JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    }
  ).scripts.sbom;
  const dir = mkdtempSync(join(tmpdir(), 'sbom-'));
  try {
    const out = join(dir, 'sbom.cdx.json');
    const args = script
      .split(' ')
      .slice(1)
      .map((arg) => (arg === 'sbom.cdx.json' ? out : arg));
    await promisify(execFile)(join(ROOT, 'node_modules/.bin/cyclonedx-npm'), args, {
      cwd: ROOT,
      maxBuffer: 16 << 20,
    });
    const bom = JSON.parse(readFileSync(out, 'utf8')) as Bom;
    expect(bom).toMatchObject({ bomFormat: 'CycloneDX', specVersion: '1.6' });
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      version: string;
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    expect(bom.metadata.component).toMatchObject({
      name: 'research-data-services',
      version: pkg.version,
    });
    const names = new Set(bom.components.map((c) => (c.group ? `${c.group}/${c.name}` : c.name)));
    for (const name of Object.keys(pkg.dependencies))
      expect({ name, listed: names.has(name) }).toEqual({ name, listed: true });
    for (const name of ['jest', 'eslint', '@cyclonedx/cyclonedx-npm', 'ts-jest'])
      expect({ name, listed: names.has(name) }).toEqual({ name, listed: false });
    expect(bom.components.every((c) => c.purl?.startsWith('pkg:npm/'))).toBe(true);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 120_000);
