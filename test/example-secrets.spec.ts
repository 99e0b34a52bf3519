import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { getMetadataStorage } from 'class-validator';
import { parseAllDocuments } from 'yaml';
import { isPlaceholderSecret, SettingsError } from '@app/platform';
import {
  CatalogSettings,
  loadCatalogSettings,
} from '../apps/catalog-api/src/config/catalog.settings';
import {
  loadProvisionerSettings,
  ProvisionerSettings,
} from '../apps/provisioner/src/config/provisioner.settings';

/**
 * Nothing in the repository may be a usable secret: every secret value in an example file
 * (.env.example, the compose examples, k8s/secrets, any Secret in k8s/) is refused by the
 * service that would read it, so copying an example can never produce a working deployment
 * with a published key or password.
 */

const ROOT = join(__dirname, '..');

interface Assignment {
  file: string;
  name: string;
  value: string;
}

/** `NAME=value` lines, commented-out ones too (`# NAME=value`): uncommenting one is one keystroke. */
function envAssignments(file: string): Assignment[] {
  return readFileSync(join(ROOT, file), 'utf8')
    .split('\n')
    .map((line) => /^(?:#\s*)?([A-Z][A-Z0-9_]*)=(.*)$/.exec(line.trim()))
    .filter((match): match is RegExpExecArray => match !== null)
    .map(([, name, value]) => ({ file, name, value }));
}

/** The data of every Secret written in a YAML file under k8s/. */
function yamlSecretAssignments(dir: string): Assignment[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.ya?ml$/.test(entry.name))
    .flatMap((entry) => {
      const file = join(entry.parentPath, entry.name).slice(ROOT.length + 1);
      return parseAllDocuments(readFileSync(join(ROOT, file), 'utf8'))
        .map((doc) => doc.toJS() as { kind?: string; stringData?: object; data?: object } | null)
        .filter((object) => object?.kind === 'Secret')
        .flatMap((secret) => [
          ...Object.entries(secret!.stringData ?? {}),
          ...Object.entries(secret!.data ?? {}).map(([k, v]) => [
            k,
            Buffer.from(String(v), 'base64').toString(),
          ]),
        ])
        .map(([name, value]) => ({ file, name: String(name), value: String(value) }));
    });
}

const files = (dir: string, suffix: string) =>
  readdirSync(join(ROOT, dir))
    .filter((name) => name.endsWith(suffix))
    .map((name) => join(dir, name));

const EXAMPLE_FILES = [
  '.env.example',
  ...files('deploy/compose/example', '.env'),
  ...files('k8s/secrets', '.env.example'),
];

/** The settings marked @RealSecret() in a settings class. */
function secretSettings(schema: new () => object): Set<string> {
  return new Set(
    getMetadataStorage()
      .getTargetValidationMetadatas(schema, '', true, false)
      .filter((metadata) => metadata.name === 'realSecret')
      .map((metadata) => metadata.propertyName),
  );
}

const CATALOG_SECRETS = secretSettings(CatalogSettings);
const PROVISIONER_SECRETS = secretSettings(ProvisionerSettings);

/** Whether a value holds a credential at all (a URL without a password holds none). */
function holdsCredential(name: string, value: string): boolean {
  if (value === '') return false;
  if (name === 'SOURCES') return value.includes('api_key');
  if (name.endsWith('_URL')) return /^[a-z]+:\/\/[^/@]*:[^/@]+@/.test(value);
  return true;
}

/** The settings a service refuses to start with, given `env` on top of valid required ones. */
function refusedBy(
  load: (env: NodeJS.ProcessEnv) => unknown,
  env: Record<string, string>,
): string[] {
  try {
    load(env);
  } catch (error) {
    if (error instanceof SettingsError) return error.problems;
    throw error;
  }
  return [];
}

const catalogWith = (name: string, value: string) =>
  refusedBy(loadCatalogSettings, {
    DATABASE_URL: 'postgres://catalog@db/catalog',
    // The client secret is only read (and checked) with a client id.
    ...(name === 'IDP_CLIENT_SECRET' ? { IDP_CLIENT_ID: 'catalog-sync' } : {}),
    [name]: value,
  });
const provisionerWith = (name: string, value: string) =>
  refusedBy(loadProvisionerSettings, { REDIS_URL: 'redis://queue:6379', [name]: value });

describe('example secrets in the repository', () => {
  const assignments = [
    ...EXAMPLE_FILES.flatMap(envAssignments),
    ...yamlSecretAssignments('k8s'),
  ].filter(({ name, value }) => holdsCredential(name, value));

  it('finds the example files and the secret settings', () => {
    expect(EXAMPLE_FILES).toEqual(
      expect.arrayContaining([
        '.env.example',
        'deploy/compose/example/catalog.env',
        'deploy/compose/example/provisioner-s3.env',
        'k8s/secrets/catalog-api-secrets.env.example',
        'k8s/secrets/provisioner-s3-secrets.env.example',
        'k8s/secrets/provisioner-secrets.env.example',
      ]),
    );
    expect([...CATALOG_SECRETS].sort()).toEqual([
      'DATABASE_DIRECT_URL',
      'DATABASE_URL',
      'GLOBAL_API_KEY',
      'IDP_CLIENT_SECRET',
    ]);
    expect([...PROVISIONER_SECRETS].sort()).toEqual([
      'CATALOG_API_KEY',
      'DATABASE_DIRECT_URL',
      'DATABASE_URL',
      'DRS_CATALOG_BROKER_KEY',
      'DRS_URL_NEXT_SIGNING_KEY',
      'DRS_URL_PREVIOUS_SIGNING_KEY',
      'DRS_URL_SIGNING_KEY',
      'PROVISIONER_API_KEY',
      'PROVISIONER_READ_API_KEYS',
      'REDIS_PASSWORD',
      'REDIS_SENTINEL_PASSWORD',
      'REDIS_URL',
      'S3_SECRET_ACCESS_KEY',
      'SOURCES',
    ]);
    const names = new Set(assignments.map((a) => a.name));
    for (const name of [
      'GLOBAL_API_KEY',
      'PROVISIONER_API_KEY',
      'CATALOG_API_KEY',
      'DATABASE_URL',
      'REDIS_URL',
      'S3_SECRET_ACCESS_KEY',
      'SOURCES',
    ])
      expect(names).toContain(name);
  });

  it('each one is refused at start by every service that reads it, naming the setting', () => {
    const accepted: string[] = [];
    for (const { file, name, value } of assignments) {
      const readers: [string, string[]][] = [];
      if (CATALOG_SECRETS.has(name)) readers.push(['catalog-api', catalogWith(name, value)]);
      if (PROVISIONER_SECRETS.has(name))
        readers.push(['provisioner', provisionerWith(name, value)]);
      for (const [service, problems] of readers) {
        if (!problems.some((problem) => problem.startsWith(name))) {
          accepted.push(`${file}: ${service} accepts ${name}=${value}`);
        }
      }
    }
    expect(accepted).toEqual([]);
  });

  it('every other secret-looking value carries a placeholder word (e.g. the Postgres password)', () => {
    const others = assignments.filter(
      ({ name }) =>
        !CATALOG_SECRETS.has(name) &&
        !PROVISIONER_SECRETS.has(name) &&
        /KEY|SECRET|PASSWORD|TOKEN/.test(name),
    );
    expect(others.map((a) => a.name)).toContain('POSTGRES_PASSWORD');
    expect(others.filter((a) => !isPlaceholderSecret(a.value))).toEqual([]);
  });

  it('real secrets pass: the rule refuses placeholders, not keys', () => {
    const key = 'Zq4vX9mB2kR7tY1wP8sL3nD6hF0jG5cA';
    expect(catalogWith('GLOBAL_API_KEY', key)).toEqual([]);
    expect(catalogWith('DATABASE_URL', `postgres://catalog:${key}@example.org/catalog`)).toEqual(
      [],
    );
    expect(provisionerWith('PROVISIONER_READ_API_KEYS', `${key},${key.toLowerCase()}`)).toEqual([]);
    expect(catalogWith('GLOBAL_API_KEY', `${key}-change-me`)).toEqual([
      'GLOBAL_API_KEY holds a placeholder of the example files (it contains "example", "change-me" or the like): set a real secret',
    ]);
  });
});
