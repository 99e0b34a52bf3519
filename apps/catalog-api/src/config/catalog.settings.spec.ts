import { SettingsError } from '@app/platform';
import { loadCatalogSettings } from './catalog.settings';

const DATABASE_URL = 'postgres://catalog:pw@db:5432/catalog';
const GOOD_KEY = 'k'.repeat(32);

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadCatalogSettings(env);
  } catch (error) {
    expect(error).toBeInstanceOf(SettingsError);
    return (error as SettingsError).problems;
  }
  throw new Error('expected the settings to be refused');
}

describe('catalog-api settings', () => {
  it('takes registration keys as SHA-256 digests only (the key itself is refused)', () => {
    const digest = 'a'.repeat(64);
    expect(
      loadCatalogSettings({
        DATABASE_URL,
        REGISTRATION_API_KEY_SHA256: `${digest},${'b'.repeat(64)}`,
      }).registrationKeyHashes,
    ).toEqual([digest, 'b'.repeat(64)]);
    expect(loadCatalogSettings({ DATABASE_URL }).registrationKeyHashes).toEqual([]);
    expect(problemsOf({ DATABASE_URL, REGISTRATION_API_KEY_SHA256: GOOD_KEY })).toEqual([
      'REGISTRATION_API_KEY_SHA256 must be a comma list of hex SHA-256 digests',
    ]);
  });

  it('checks the DCAT settings: legislation as a list of IRIs, an HDAB with its e-mail', () => {
    const settings = loadCatalogSettings({ DATABASE_URL });
    expect(settings.DCAT_PUBLISHER_NAME).toBeUndefined();
    expect(settings.applicableLegislation).toEqual(['http://data.europa.eu/eli/reg/2025/327/oj']);
    expect(settings.DCAT_PAGE_SIZE).toBe(1000);
    expect(
      loadCatalogSettings({
        DATABASE_URL,
        DCAT_APPLICABLE_LEGISLATION: 'http://data.europa.eu/eli/a,https://data.europa.eu/eli/b',
      }).applicableLegislation,
    ).toEqual(['http://data.europa.eu/eli/a', 'https://data.europa.eu/eli/b']);
    expect(
      problemsOf({
        DATABASE_URL,
        DCAT_APPLICABLE_LEGISLATION: 'EHDS',
        DCAT_HDAB_NAME: 'HDAB',
        DCAT_CONTACT_EMAIL: 'not-an-address',
        DCAT_PUBLISHER_URI: 'ror',
        DCAT_PAGE_SIZE: '0',
      }).sort(),
    ).toEqual(
      [
        'DCAT_APPLICABLE_LEGISLATION must be a comma list of http(s) IRIs',
        'DCAT_HDAB_EMAIL must be an e-mail address when DCAT_HDAB_NAME is set',
        'DCAT_CONTACT_EMAIL must be an email',
        'DCAT_PUBLISHER_URI must be a URL address',
        'DCAT_PAGE_SIZE must not be less than 1',
      ].sort(),
    );
  });

  it('starts from the documented defaults', () => {
    const settings = loadCatalogSettings({ DATABASE_URL });
    expect(settings).toMatchObject({
      PORT: 3000,
      HOST: '0.0.0.0',
      DATABASE_POOL_SIZE: 10,
      DATABASE_STATEMENT_TIMEOUT_MS: 30_000,
      sessionDatabaseUrl: DATABASE_URL,
      MIGRATIONS_RUN: true,
      CATALOG_VERSION_LISTEN: true,
      MAX_BODY_BYTES: 10 * 1024 * 1024,
      LOG_LEVEL: 'info',
      TRUSTED_PROXIES: '',
    });
    expect(settings.GLOBAL_API_KEY).toBeUndefined();
  });

  it('takes session work to DATABASE_DIRECT_URL when DATABASE_URL names a pooler', () => {
    const direct = 'postgres://catalog:pw@db-primary:5432/catalog';
    expect(
      loadCatalogSettings({ DATABASE_URL, DATABASE_DIRECT_URL: direct }).sessionDatabaseUrl,
    ).toBe(direct);
    expect(problemsOf({ DATABASE_URL, DATABASE_DIRECT_URL: 'db-primary' })[0]).toMatch(
      /^DATABASE_DIRECT_URL /,
    );
    expect(problemsOf({ DATABASE_URL, DATABASE_STATEMENT_TIMEOUT_MS: '0' })[0]).toMatch(
      /^DATABASE_STATEMENT_TIMEOUT_MS /,
    );
  });

  it('accepts postgresql:// URLs and reads numbers and booleans from strings', () => {
    const settings = loadCatalogSettings({
      DATABASE_URL: 'postgresql://localhost/catalog',
      PORT: '8080',
      MIGRATIONS_RUN: 'false',
      CATALOG_VERSION_LISTEN: 'false',
      GLOBAL_API_KEY: GOOD_KEY,
    });
    expect(settings.PORT).toBe(8080);
    expect(settings.MIGRATIONS_RUN).toBe(false);
    expect(settings.CATALOG_VERSION_LISTEN).toBe(false);
    expect(settings.GLOBAL_API_KEY).toBe(GOOD_KEY);
  });

  it('refuses a GLOBAL_API_KEY shorter than 32 characters with its own message', () => {
    expect(problemsOf({ DATABASE_URL, GLOBAL_API_KEY: 'k'.repeat(31) })).toEqual([
      'GLOBAL_API_KEY must be at least 32 characters long',
    ]);
  });

  it('treats an empty GLOBAL_API_KEY as unset (the global key disabled), not as too short', () => {
    expect(
      loadCatalogSettings({ DATABASE_URL, GLOBAL_API_KEY: '' }).GLOBAL_API_KEY,
    ).toBeUndefined();
  });

  it('lists a missing DATABASE_URL', () => {
    const problems = problemsOf({});
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^DATABASE_URL /);
  });

  it('refuses a DATABASE_URL that is not a Postgres URL', () => {
    expect(problemsOf({ DATABASE_URL: 'mysql://db/catalog' })[0]).toMatch(/^DATABASE_URL /);
  });

  it('lists several bad settings together', () => {
    const problems = problemsOf({
      GLOBAL_API_KEY: 'short',
      PORT: '70000',
      MIGRATIONS_RUN: 'sometimes',
      CATALOG_VERSION_LISTEN: 'maybe',
      LOG_LEVEL: 'loud',
      MAX_BODY_BYTES: '10',
      CATALOG_SOURCE: 'not a url',
    });
    const named = new Set(problems.map((problem) => problem.split(' ')[0]));
    expect([...named].sort()).toEqual([
      'CATALOG_SOURCE',
      'CATALOG_VERSION_LISTEN',
      'DATABASE_URL',
      'GLOBAL_API_KEY',
      'LOG_LEVEL',
      'MAX_BODY_BYTES',
      'MIGRATIONS_RUN',
      'PORT',
    ]);
    expect(problems).toContain('GLOBAL_API_KEY must be at least 32 characters long');
  });

  it('derives source from CATALOG_SOURCE without a trailing slash, else from the host name and port', () => {
    expect(
      loadCatalogSettings({ DATABASE_URL, CATALOG_SOURCE: 'https://catalog.example.org/' }).source,
    ).toBe('https://catalog.example.org');
    expect(loadCatalogSettings({ DATABASE_URL, PORT: '3100' }).source).toMatch(
      /^http:\/\/[^/]+:3100$/,
    );
  });
});
