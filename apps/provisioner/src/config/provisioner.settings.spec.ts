import { availableParallelism } from 'node:os';
import { SettingsError } from '@app/platform';
import { configureQueueBackend } from '../queue/queue-backend';
import { loadProvisionerSettings } from './provisioner.settings';

const REDIS_URL = 'redis://redis:6379';
const DATABASE_URL = 'postgres://provisioner@db:5432/provisioner';
const KEY = 'w'.repeat(32);

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadProvisionerSettings(env);
  } catch (error) {
    expect(error).toBeInstanceOf(SettingsError);
    return (error as SettingsError).problems;
  }
  throw new Error('expected the settings to be refused');
}

describe('provisioner settings', () => {
  describe('DRS access-URL keys', () => {
    const drs = {
      REDIS_URL,
      DRS_PUBLIC_URL: 'https://drs.example.org/',
      DRS_VISA_ISSUER: 'https://catalog.example.org',
      CATALOG_URL: 'https://catalog.example.org',
      DRS_CATALOG_BROKER_KEY: 'b'.repeat(40),
    };

    it('in production (NODE_ENV=production) DRS needs DRS_URL_SIGNING_KEY, and says so by name', () => {
      expect(problemsOf({ ...drs, NODE_ENV: 'production' })).toEqual([
        expect.stringMatching(/^DRS_URL_SIGNING_KEY is required with DRS_PUBLIC_URL in production/),
      ]);
      expect(
        loadProvisionerSettings({ ...drs, NODE_ENV: 'production', DRS_URL_SIGNING_KEY: KEY })
          .DRS_URL_SIGNING_KEY,
      ).toBe(KEY);
      // A developer's machine (npm start, tests) makes a key per process; so does a service
      // without DRS.
      expect(loadProvisionerSettings(drs).DRS_URL_SIGNING_KEY).toBeUndefined();
      expect(loadProvisionerSettings({ REDIS_URL, NODE_ENV: 'production' }).drs).toBeNull();
    });

    it('base URLs are normalised once, at load: no trailing slash wherever they are used', () => {
      const settings = loadProvisionerSettings({
        ...drs,
        DRS_VISA_ISSUER: 'https://catalog.example.org//',
        CATALOG_URL: 'https://catalog.example.org/base/',
        CATALOG_API_KEY: KEY,
      });
      expect(settings.DRS_PUBLIC_URL).toBe('https://drs.example.org');
      expect(settings.drs).toMatchObject({
        publicUrl: 'https://drs.example.org',
        issuer: 'https://catalog.example.org',
        jku: 'https://catalog.example.org/api/jwk',
        catalogUrl: 'https://catalog.example.org/base',
      });
      expect(settings.catalogRegistration?.url).toBe('https://catalog.example.org/base');
    });

    it('DRS reads one settings group, derived from the DRS_* settings (and the catalog time limit)', () => {
      expect(
        loadProvisionerSettings({
          ...drs,
          DRS_URL_SIGNING_KEY: KEY,
          DRS_URL_PREVIOUS_SIGNING_KEY: 'p'.repeat(32),
          DRS_ACCESS_URL_SECONDS: '120',
          DRS_GRANT_CHECK_SECONDS: '5',
          DRS_MAX_VISAS: '7',
          DRS_MAX_BULK_REQUEST_LENGTH: '9',
          DRS_MAX_DATASET_FILES: '11',
          DRS_BYTES_OFFLOAD: 'nginx',
          DRS_BYTES_OFFLOAD_PREFIX: '/_bytes/',
          DRS_PLAINTEXT_DOWNLOADS: 'on',
          CATALOG_TIMEOUT_MS: '1500',
        }).drsSettings,
      ).toEqual({
        endpoint: {
          publicUrl: 'https://drs.example.org',
          host: 'drs.example.org',
          issuer: 'https://catalog.example.org',
          jku: 'https://catalog.example.org/api/jwk',
          catalogUrl: 'https://catalog.example.org',
          brokerKey: 'b'.repeat(40),
          bearerIssuer: undefined,
        },
        accessUrlKeys: { signing: KEY, next: undefined, previous: 'p'.repeat(32) },
        accessUrlSeconds: 120,
        grantCheckSeconds: 5,
        maxVisas: 7,
        maxBulkRequestLength: 9,
        maxDatasetFiles: 11,
        bytesOffloadPrefix: '/_bytes/',
        plaintextDownloads: true,
        catalogTimeoutMs: 1500,
      });
      // DRS off: no endpoint; this process sends the bytes unless nginx is named.
      expect(loadProvisionerSettings({ REDIS_URL }).drsSettings).toMatchObject({
        endpoint: null,
        accessUrlKeys: {},
        bytesOffloadPrefix: null,
        plaintextDownloads: false,
        accessUrlSeconds: 300,
        grantCheckSeconds: 60,
      });
    });

    it('plain-text downloads of encrypted files: off by default, on only with an https:// DRS_PUBLIC_URL', () => {
      expect(loadProvisionerSettings({ REDIS_URL }).drsSettings.plaintextDownloads).toBe(false);
      expect(
        loadProvisionerSettings({ ...drs, DRS_PLAINTEXT_DOWNLOADS: 'on' }).drsSettings
          .plaintextDownloads,
      ).toBe(true);
      expect(
        problemsOf({
          ...drs,
          DRS_PUBLIC_URL: 'http://drs.example.org',
          DRS_PLAINTEXT_DOWNLOADS: 'on',
        }),
      ).toEqual([
        'DRS_PLAINTEXT_DOWNLOADS=on needs an https:// DRS_PUBLIC_URL: plain-text is sent only over TLS',
      ]);
      expect(problemsOf({ REDIS_URL, DRS_PLAINTEXT_DOWNLOADS: 'on' })).toEqual([
        'DRS_PLAINTEXT_DOWNLOADS=on needs an https:// DRS_PUBLIC_URL: plain-text is sent only over TLS',
      ]);
      expect(problemsOf({ REDIS_URL, DRS_PLAINTEXT_DOWNLOADS: 'yes' })).toEqual([
        'DRS_PLAINTEXT_DOWNLOADS must be off or on',
      ]);
    });

    it('the next and previous keys: real secrets of 32 characters, only beside a signing key', () => {
      expect(
        problemsOf({
          ...drs,
          DRS_URL_NEXT_SIGNING_KEY: 'short',
          DRS_URL_PREVIOUS_SIGNING_KEY: KEY,
        }),
      ).toEqual(
        expect.arrayContaining([
          'DRS_URL_NEXT_SIGNING_KEY must be at least 32 characters long',
          expect.stringMatching(/^DRS_URL_NEXT_SIGNING_KEY is only read with DRS_URL_SIGNING_KEY/),
          expect.stringMatching(
            /^DRS_URL_PREVIOUS_SIGNING_KEY is only read with DRS_URL_SIGNING_KEY/,
          ),
        ]),
      );
      expect(
        problemsOf({
          ...drs,
          DRS_URL_SIGNING_KEY: KEY,
          DRS_URL_NEXT_SIGNING_KEY: `example-${'x'.repeat(32)}`,
        }),
      ).toEqual([expect.stringMatching(/^DRS_URL_NEXT_SIGNING_KEY holds a placeholder/)]);
    });
  });

  it("validators: taken with S3 storage and in archive mode, but an S3 inbox's only on plain filesystem storage; their work directory is absolute, bounded", () => {
    const SOURCES = JSON.stringify([
      { name: 'dz', type: 'dropzone', root: '/dz', validators: [{ name: 'v', command: ['v'] }] },
    ]);
    const plain = loadProvisionerSettings({ REDIS_URL, SOURCES });
    expect(plain.sources[0].validators).toHaveLength(1);
    expect(plain.VALIDATOR_WORK_DIR).toBeUndefined();
    expect(plain.VALIDATOR_WORK_MAX_BYTES).toBe(10 * 1024 ** 3);
    const s3 = { STORAGE_BACKEND: 's3', S3_BUCKET: 'research-data' };
    expect(loadProvisionerSettings({ REDIS_URL, SOURCES, ...s3 }).sources).toHaveLength(1);
    const archive = loadProvisionerSettings({
      REDIS_URL,
      SOURCES,
      STORAGE_ENCRYPTION: 'crypt4gh',
      C4GH_ARCHIVE_SECRET_KEY_FILE: '/keys/archive.sec',
      VALIDATOR_WORK_DIR: '/scratch/validators',
      VALIDATOR_WORK_MAX_BYTES: '1073741824',
    });
    expect([archive.VALIDATOR_WORK_DIR, archive.VALIDATOR_WORK_MAX_BYTES]).toEqual([
      '/scratch/validators',
      1024 ** 3,
    ]);
    // An S3 inbox's validators read its staged files where they lie: filesystem storage only.
    const inbox = JSON.stringify([
      { name: 'inbox', type: 's3', bucket: 'inbox', validators: [{ name: 'v', command: ['v'] }] },
    ]);
    expect(loadProvisionerSettings({ REDIS_URL, SOURCES: inbox }).sources).toHaveLength(1);
    for (const storage of [
      s3,
      { STORAGE_ENCRYPTION: 'crypt4gh', C4GH_ARCHIVE_SECRET_KEY_FILE: '/keys/archive.sec' },
    ])
      expect(problemsOf({ REDIS_URL, SOURCES: inbox, ...storage })).toEqual([
        expect.stringMatching(
          /^SOURCES: inbox: validators of an s3 source need STORAGE_BACKEND=filesystem/,
        ),
      ]);
    expect(
      problemsOf({ REDIS_URL, VALIDATOR_WORK_DIR: 'scratch', VALIDATOR_WORK_MAX_BYTES: '0' }),
    ).toEqual([
      'VALIDATOR_WORK_DIR must be an absolute path',
      expect.stringMatching(/^VALIDATOR_WORK_MAX_BYTES/),
    ]);
  });

  it('S3 storage: every problem listed at once; the prefix ends in "/"; filesystem stays the default', () => {
    expect(loadProvisionerSettings({ REDIS_URL }).STORAGE_BACKEND).toBe('filesystem');
    const problems = problemsOf({
      REDIS_URL,
      STORAGE_BACKEND: 's3',
      S3_ENDPOINT: 'ftp://s3',
      S3_PREFIX: 'a/../b',
      S3_SECRET_ACCESS_KEY: 'example-secret',
      S3_PART_BYTES: '1024',
    });
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^S3_ENDPOINT must be/),
        expect.stringMatching(/^S3_BUCKET must be a bucket name/),
        expect.stringMatching(/^S3_PREFIX must be/),
        expect.stringMatching(/^S3_ACCESS_KEY_ID is required/),
        expect.stringMatching(/^S3_SECRET_ACCESS_KEY holds a placeholder/),
        expect.stringMatching(/^S3_PART_BYTES/),
      ]),
    );
    expect(problemsOf({ REDIS_URL, STORAGE_BACKEND: 'nfs' })).toEqual([
      'STORAGE_BACKEND must be filesystem or s3',
    ]);
    const s3 = loadProvisionerSettings({
      REDIS_URL,
      STORAGE_BACKEND: 's3',
      S3_BUCKET: 'research-data',
      S3_PREFIX: 'institute/imports',
      S3_FORCE_PATH_STYLE: 'true',
    });
    expect([s3.s3KeyPrefix, s3.S3_FORCE_PATH_STYLE, s3.S3_PART_BYTES]).toEqual([
      'institute/imports/',
      true,
      8 * 1024 * 1024,
    ]);
  });

  it('S3 time-outs: connect, request and idle, each bounded; the prefix leaves the layout room in a key', () => {
    const defaults = loadProvisionerSettings({ REDIS_URL });
    expect([
      defaults.S3_CONNECT_TIMEOUT_MS,
      defaults.S3_REQUEST_TIMEOUT_MS,
      defaults.S3_IDLE_TIMEOUT_MS,
    ]).toEqual([10_000, 300_000, 60_000]);
    const problems = problemsOf({
      REDIS_URL,
      S3_CONNECT_TIMEOUT_MS: '0',
      S3_REQUEST_TIMEOUT_MS: 'soon',
      S3_IDLE_TIMEOUT_MS: '99',
      S3_PREFIX: 'p'.repeat(513),
    });
    expect([...new Set(problems.map((p) => p.split(' ')[0]))]).toEqual([
      'S3_PREFIX',
      'S3_CONNECT_TIMEOUT_MS',
      'S3_REQUEST_TIMEOUT_MS',
      'S3_IDLE_TIMEOUT_MS',
    ]);
    expect(problems[0]).toBe('S3_PREFIX must be at most 512 characters');
  });

  it('registers in the catalog only with both its URL and key; the key is a real secret', () => {
    expect(loadProvisionerSettings({ REDIS_URL }).catalogRegistration).toBeNull();
    expect(
      loadProvisionerSettings({ REDIS_URL, CATALOG_URL: 'http://catalog:3000' })
        .catalogRegistration,
    ).toBeNull();
    expect(
      loadProvisionerSettings({
        REDIS_URL,
        CATALOG_URL: 'http://catalog:3000/',
        CATALOG_API_KEY: KEY,
      }).catalogRegistration,
    ).toEqual({ url: 'http://catalog:3000', apiKey: KEY });
    expect(problemsOf({ REDIS_URL, CATALOG_API_KEY: 'short' })).toEqual([
      'CATALOG_API_KEY must be at least 32 characters long',
    ]);
    expect(problemsOf({ REDIS_URL, CATALOG_API_KEY: `example-${KEY}` })[0]).toMatch(
      /^CATALOG_API_KEY holds a placeholder/,
    );
  });

  it('archive mode: off by default; crypt4gh needs the key file, the passphrase file only beside it', () => {
    expect(loadProvisionerSettings({ REDIS_URL }).STORAGE_ENCRYPTION).toBe('off');
    expect(loadProvisionerSettings({ REDIS_URL }).archiveKeyFiles).toBeNull();
    expect(problemsOf({ REDIS_URL, STORAGE_ENCRYPTION: 'crypt4gh' })).toEqual([
      expect.stringContaining(
        'C4GH_ARCHIVE_SECRET_KEY_FILE is required with STORAGE_ENCRYPTION=crypt4gh',
      ),
    ]);
    expect(problemsOf({ REDIS_URL, STORAGE_ENCRYPTION: 'aes' })).toEqual([
      expect.stringContaining('STORAGE_ENCRYPTION must be off or crypt4gh'),
    ]);
    expect(problemsOf({ REDIS_URL, C4GH_ARCHIVE_PASSPHRASE_FILE: '/run/pass' })).toEqual([
      expect.stringContaining(
        'C4GH_ARCHIVE_PASSPHRASE_FILE is only read with C4GH_ARCHIVE_SECRET_KEY_FILE',
      ),
    ]);
    const on = loadProvisionerSettings({
      REDIS_URL,
      STORAGE_ENCRYPTION: 'crypt4gh',
      C4GH_ARCHIVE_SECRET_KEY_FILE: '/run/archive.sec',
      C4GH_ARCHIVE_PASSPHRASE_FILE: '/run/pass',
    });
    expect(on.archiveKeyFiles).toEqual({
      keyFile: '/run/archive.sec',
      passphraseFile: '/run/pass',
    });
  });

  it('refuses to start with neither a Redis setting nor DATABASE_URL', () => {
    expect(problemsOf({})).toEqual([
      'DATABASE_URL must be a postgres:// URL (it is required when neither REDIS_URL, REDIS_SENTINELS nor REDIS_CLUSTER_NODES is set)',
    ]);
  });

  it('refuses Redis settings that contradict or lack each other, naming each problem', () => {
    expect(problemsOf({ REDIS_URL, REDIS_SENTINELS: 's:26379', REDIS_SENTINEL_NAME: 'q' })).toEqual(
      ['REDIS_SENTINELS cannot be combined with REDIS_URL: set one way to reach Redis'],
    );
    expect(
      problemsOf({
        REDIS_SENTINELS: 's:26379',
        REDIS_SENTINEL_NAME: 'q',
        REDIS_CLUSTER_NODES: 'c:6379',
      }),
    ).toEqual([
      'REDIS_CLUSTER_NODES cannot be combined with REDIS_SENTINELS: set one way to reach Redis',
    ]);
    expect(problemsOf({ REDIS_SENTINELS: 's:26379' })).toEqual([
      "REDIS_SENTINEL_NAME must be the primary's name (A-Z a-z 0-9 . _ -); required with REDIS_SENTINELS",
    ]);
    expect(problemsOf({ REDIS_SENTINELS: 's:26379,s2', REDIS_SENTINEL_NAME: 'q' })).toEqual([
      'REDIS_SENTINELS must be a comma list of host:port (a port 1-65535; an IPv6 address in brackets)',
    ]);
    expect(problemsOf({ REDIS_CLUSTER_NODES: 'c:0' })[0]).toMatch(
      /^REDIS_CLUSTER_NODES must be a comma list/,
    );
    expect(
      problemsOf({ REDIS_URL, REDIS_SENTINEL_NAME: 'q', REDIS_PASSWORD: 'a-real-password' }),
    ).toEqual([
      'REDIS_SENTINEL_NAME is only read with REDIS_SENTINELS, which is not set',
      'REDIS_PASSWORD is only read with REDIS_SENTINELS or REDIS_CLUSTER_NODES, which is not set',
    ]);
    expect(
      problemsOf({ REDIS_CLUSTER_NODES: 'c:6379', REDIS_PASSWORD: 'example-only' })[0],
    ).toMatch(/^REDIS_PASSWORD holds a placeholder/);
  });

  it('runs on Redis alone, or on Postgres alone', () => {
    expect(loadProvisionerSettings({ REDIS_URL }).REDIS_URL).toBe(REDIS_URL);
    expect(loadProvisionerSettings({ DATABASE_URL }).DATABASE_URL).toBe(DATABASE_URL);
  });

  it('checks DATABASE_URL whenever it is given, Redis or not', () => {
    expect(problemsOf({ REDIS_URL, DATABASE_URL: 'http://db' })[0]).toMatch(/^DATABASE_URL /);
  });

  it('puts the PostgreSQL queue on DATABASE_DIRECT_URL when DATABASE_URL names a pooler', () => {
    const direct = 'postgres://provisioner@db-primary:5432/provisioner';
    const onPostgres = (env: Record<string, string>) =>
      (
        configureQueueBackend(loadProvisionerSettings(env), 'api') as {
          connection: { connectionString: string };
        }
      ).connection.connectionString;
    expect(onPostgres({ DATABASE_URL })).toBe(DATABASE_URL);
    expect(onPostgres({ DATABASE_URL, DATABASE_DIRECT_URL: direct })).toBe(direct);
    expect(problemsOf({ DATABASE_URL, DATABASE_DIRECT_URL: 'db-primary' })[0]).toMatch(
      /^DATABASE_DIRECT_URL /,
    );
  });

  it('refuses a REDIS_URL that is not redis:// or rediss://', () => {
    expect(problemsOf({ REDIS_URL: 'http://redis:6379', DATABASE_URL })[0]).toMatch(/^REDIS_URL /);
    expect(
      loadProvisionerSettings({ REDIS_URL: 'rediss://u:p@redis:6380/2' }).REDIS_URL,
    ).toBeDefined();
  });

  it('caps what the metadata of a source may make it read: 1 MiB, 128 MiB and 10,000 datasets unless told', () => {
    expect(loadProvisionerSettings({ REDIS_URL }).sourceLimits).toEqual({
      metadataMaxBytes: 1024 * 1024,
      manifestMaxBytes: 128 * 1024 * 1024,
      submissionMaxDatasets: 10_000,
    });
    expect(
      loadProvisionerSettings({
        REDIS_URL,
        SOURCE_METADATA_MAX_BYTES: '4096',
        SOURCE_MANIFEST_MAX_BYTES: '1048576',
        SOURCE_SUBMISSION_MAX_DATASETS: '12',
      }).sourceLimits,
    ).toEqual({ metadataMaxBytes: 4096, manifestMaxBytes: 1048576, submissionMaxDatasets: 12 });
    expect(problemsOf({ REDIS_URL, SOURCE_SUBMISSION_MAX_DATASETS: '0' })[0]).toMatch(
      /^SOURCE_SUBMISSION_MAX_DATASETS /,
    );
    expect(problemsOf({ REDIS_URL, SOURCE_MANIFEST_MAX_BYTES: '0' })[0]).toMatch(
      /^SOURCE_MANIFEST_MAX_BYTES /,
    );
    expect(problemsOf({ REDIS_URL, SOURCE_METADATA_MAX_BYTES: 'lots' })[0]).toMatch(
      /^SOURCE_METADATA_MAX_BYTES /,
    );
  });

  it('refuses a write key shorter than 32 characters', () => {
    expect(problemsOf({ REDIS_URL, PROVISIONER_API_KEY: 'w'.repeat(31) })).toEqual([
      'PROVISIONER_API_KEY must be at least 32 characters long',
    ]);
  });

  it('refuses a read key list with any key shorter than 32 characters', () => {
    expect(problemsOf({ REDIS_URL, PROVISIONER_READ_API_KEYS: `${'r'.repeat(32)},short` })).toEqual(
      ['PROVISIONER_READ_API_KEYS must be a comma list of keys of at least 32 characters'],
    );
  });

  it('reads the read keys as a trimmed list', () => {
    const a = 'a'.repeat(32);
    const b = 'b'.repeat(40);
    const settings = loadProvisionerSettings({
      REDIS_URL,
      PROVISIONER_API_KEY: KEY,
      PROVISIONER_READ_API_KEYS: ` ${a} , ${b} `,
    });
    expect(settings.readApiKeys).toEqual([a, b]);
    expect(loadProvisionerSettings({ REDIS_URL }).readApiKeys).toEqual([]);
  });

  it('lists several bad settings together', () => {
    const problems = problemsOf({
      PROVISIONER_API_KEY: 'short',
      PORT: 'x',
      QUEUE_PREFIX: 'Bad-Prefix',
      IMPORT_CONCURRENCY: '0',
    });
    const named = new Set(problems.map((problem) => problem.split(' ')[0]));
    expect([...named].sort()).toEqual([
      'DATABASE_URL',
      'IMPORT_CONCURRENCY',
      'PORT',
      'PROVISIONER_API_KEY',
      'QUEUE_PREFIX',
    ]);
  });

  it('takes IMPORT_COPY_THREADS from 0 (main thread only) to 64, one per core up to 4 by default (1 on S3)', () => {
    const S3 = { STORAGE_BACKEND: 's3', S3_BUCKET: 'research-data' };
    expect(loadProvisionerSettings({ REDIS_URL }).copyThreads).toBe(
      Math.min(availableParallelism(), 4),
    );
    expect(loadProvisionerSettings({ REDIS_URL, ...S3 }).copyThreads).toBe(1);
    expect(
      loadProvisionerSettings({ REDIS_URL, ...S3, IMPORT_COPY_THREADS: '2' }).copyThreads,
    ).toBe(2);
    expect(loadProvisionerSettings({ REDIS_URL, IMPORT_COPY_THREADS: '0' }).copyThreads).toBe(0);
    expect(loadProvisionerSettings({ REDIS_URL, IMPORT_COPY_THREADS: ' 8 ' }).copyThreads).toBe(8);
    // Archive mode's sealing threads: the setting when given, else one per core up to 4 on S3 too.
    expect(loadProvisionerSettings({ REDIS_URL, ...S3 }).sealingThreads).toBe(
      Math.min(availableParallelism(), 4),
    );
    expect(
      loadProvisionerSettings({ REDIS_URL, ...S3, IMPORT_COPY_THREADS: '1' }).sealingThreads,
    ).toBe(1);
    expect(
      loadProvisionerSettings({ REDIS_URL, ...S3, IMPORT_COPY_THREADS: '0' }).sealingThreads,
    ).toBe(0);
    // IMPORT_SEALING_THREADS apart from the copy threads, as the manifests set them with S3 storage.
    expect(
      loadProvisionerSettings({
        REDIS_URL,
        ...S3,
        IMPORT_COPY_THREADS: '1',
        IMPORT_SEALING_THREADS: '2',
      }),
    ).toMatchObject({ copyThreads: 1, sealingThreads: 2 });
    expect(
      loadProvisionerSettings({ REDIS_URL, IMPORT_COPY_THREADS: '2', IMPORT_SEALING_THREADS: '0' })
        .sealingThreads,
    ).toBe(0);
    for (const name of ['IMPORT_COPY_THREADS', 'IMPORT_SEALING_THREADS']) {
      for (const bad of ['-1', '65', '1.5', 'two']) {
        const problems = problemsOf({ REDIS_URL, [name]: bad });
        expect(problems.length).toBeGreaterThan(0);
        for (const problem of problems) expect(problem).toMatch(new RegExp(`^${name} `));
      }
    }
  });

  it("chooses the large files' write path by measuring unless IMPORT_DIRECT_WRITES says true or false", () => {
    const directWrites = (value?: string) =>
      loadProvisionerSettings({ REDIS_URL, ...(value ? { IMPORT_DIRECT_WRITES: value } : {}) })
        .IMPORT_DIRECT_WRITES;
    expect(directWrites()).toBe('auto');
    expect(directWrites('auto')).toBe('auto');
    expect(directWrites('true')).toBe(true);
    expect(directWrites('on')).toBe(true);
    expect(directWrites('false')).toBe(false);
    for (const bad of ['sometimes', 'AUTO ', 'direct']) {
      const problems = problemsOf({ REDIS_URL, IMPORT_DIRECT_WRITES: bad });
      expect(problems).toEqual([expect.stringMatching(/^IMPORT_DIRECT_WRITES /)]);
    }
  });

  it('has the documented defaults', () => {
    expect(loadProvisionerSettings({ REDIS_URL })).toMatchObject({
      PORT: 3001,
      WORKER_HEALTH_PORT: 3002,
      QUEUE_PREFIX: 'provisioner',
      PROVISIONER_READ_API_KEYS: '',
      MAX_BODY_BYTES: 1024 * 1024,
    });
  });
});
