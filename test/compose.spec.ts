import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { imageEnv } from '../scripts/lib/deployed-node-args';

// No Docker engine runs on these machines: the packaging is checked by reading it.
const ROOT = join(__dirname, '..');
const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');

interface Service {
  image?: string;
  build?: unknown;
  command?: string[];
  restart?: string;
  env_file?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  ports?: string[];
  healthcheck?: { test?: string[] | string; disable?: boolean };
  depends_on?: Record<string, { condition: string }> | string[];
}

const compose = parse(read('docker-compose.yml'), { merge: true }) as {
  services: Record<string, Service>;
  volumes: Record<string, unknown>;
};
const { services } = compose;
const APP_SERVICES = ['migrate', 'catalog-api', 'provisioner-api', 'provisioner-worker'];
const LONG_RUNNING = Object.keys(services).filter((name) => name !== 'migrate');
const packageVersion = (JSON.parse(read('package.json')) as { version: string }).version;

/** `${VAR:-default}` as compose resolves it when VAR is unset. */
const withDefaults = (value: string): string => value.replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1');

function envFileOf(service: string): Record<string, string> {
  const files = services[service].env_file ?? [];
  expect(files).toHaveLength(1);
  const entries = read(withDefaults(files[0]))
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith('#'))
    .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]);
  return Object.fromEntries(entries) as Record<string, string>;
}

describe('docker-compose.yml', () => {
  it('has exactly the six services of the system', () => {
    expect(Object.keys(services).sort()).toEqual(
      [
        'catalog-api',
        'migrate',
        'postgres',
        'provisioner-api',
        'provisioner-worker',
        'redis',
      ].sort(),
    );
  });

  it('pins every image tag (no missing tag, no latest, a full version for third-party images)', () => {
    for (const [name, service] of Object.entries(services)) {
      // The default an unset RDS_IMAGE / POSTGRES_IMAGE / REDIS_IMAGE leaves.
      const image = withDefaults(service.image ?? '');
      const match = /^([a-z0-9./_-]+):([A-Za-z0-9._-]+)$/.exec(image);
      expect({ name, pinned: match !== null }).toEqual({ name, pinned: true });
      expect(match![2]).not.toBe('latest');
      expect(match![2]).toMatch(/^\d+\.\d+/);
    }
    expect(withDefaults(services.postgres.image!)).toMatch(/^postgres:16\.\d+-bookworm$/);
    expect(withDefaults(services.redis.image!)).toMatch(/^redis:7\.\d+\.\d+-bookworm$/);
  });

  it('builds the one project image, tagged with the package version, for every app service', () => {
    for (const name of APP_SERVICES) {
      expect(services[name].image).toBe(`\${RDS_IMAGE:-research-data-services:${packageVersion}}`);
      expect(services[name].build).toEqual({ context: '.' });
    }
  });

  it('runs the documented entry points, which exist as sources', () => {
    const entries = Object.fromEntries(APP_SERVICES.map((name) => [name, services[name].command]));
    expect(entries).toEqual({
      migrate: ['node', 'dist/apps/catalog-api/apps/catalog-api/src/database/migrate.js'],
      'catalog-api': [
        'node',
        '--max-semi-space-size=4',
        '--max-old-space-size=256',
        'dist/apps/catalog-api/apps/catalog-api/src/main.js',
      ],
      'provisioner-api': [
        'node',
        '--max-semi-space-size=4',
        '--max-old-space-size=192',
        'dist/apps/provisioner/apps/provisioner/src/main.js',
      ],
      'provisioner-worker': [
        'node',
        '--max-semi-space-size=4',
        '--max-old-space-size=384',
        '--external-memory-accounted-in-global-limit',
        'dist/apps/provisioner/apps/provisioner/src/worker.js',
      ],
    });
    for (const command of Object.values(entries)) {
      const script = command!.find((part) => part.startsWith('dist/'))!;
      const source = script.replace(/^dist\/apps\/[^/]+\//, '').replace(/\.js$/, '.ts');
      expect(existsSync(join(ROOT, source))).toBe(true);
    }
  });

  it('gives every long-running service a health check', () => {
    for (const name of LONG_RUNNING) {
      const check = services[name].healthcheck;
      expect({ name, test: check?.test }).toEqual({
        name,
        test: expect.arrayContaining([expect.any(String)]),
      });
      expect(check?.disable).not.toBe(true);
    }
    expect(services.postgres.healthcheck?.test).toEqual([
      'CMD-SHELL',
      expect.stringContaining('pg_isready'),
    ]);
    expect(services.redis.healthcheck?.test).toEqual(['CMD', 'redis-cli', 'ping']);
  });

  it("checks each app's own readiness endpoint on its own port", () => {
    const ports: Record<string, string> = {
      'catalog-api': '3000',
      'provisioner-api': '3001',
      'provisioner-worker': '3002',
    };
    for (const [name, port] of Object.entries(ports)) {
      expect(services[name].healthcheck?.test).toEqual(
        expect.arrayContaining([expect.stringContaining(`http://127.0.0.1:${port}/health/ready`)]),
      );
    }
    expect(services['catalog-api'].environment?.PORT).toBe('3000');
    expect(services['provisioner-api'].environment?.PORT).toBe('3001');
    expect(services['provisioner-worker'].environment?.WORKER_HEALTH_PORT).toBe('3002');
  });

  it('makes the migration a one-shot service that catalog-api waits on, with migrations off in the app', () => {
    expect(services.migrate.restart).toBe('no');
    expect(services.migrate.ports).toBeUndefined();
    expect(services['catalog-api'].environment?.MIGRATIONS_RUN).toBe('false');
  });

  it('starts each service only once what it needs is healthy (or, for the migration, done)', () => {
    const dependencies = Object.fromEntries(
      Object.entries(services).map(([name, service]) => [name, service.depends_on ?? {}]),
    );
    expect(dependencies).toEqual({
      postgres: {},
      redis: {},
      migrate: { postgres: { condition: 'service_healthy' } },
      'catalog-api': {
        postgres: { condition: 'service_healthy' },
        migrate: { condition: 'service_completed_successfully' },
      },
      'provisioner-api': { redis: { condition: 'service_healthy' } },
      'provisioner-worker': { redis: { condition: 'service_healthy' } },
    });
  });

  it('keeps data across restarts: named volumes for Postgres, Redis (append-only), storage and drop zone', () => {
    expect(services.postgres.volumes).toContain('postgres-data:/var/lib/postgresql/data');
    expect(services.redis.volumes).toContain('redis-data:/data');
    const redisCommand = services.redis.command ?? [];
    expect(redisCommand[redisCommand.indexOf('--appendonly') + 1]).toBe('yes');
    expect(redisCommand[redisCommand.indexOf('--maxmemory-policy') + 1]).toBe('noeviction');
    for (const name of ['provisioner-api', 'provisioner-worker']) {
      expect(services[name].volumes).toEqual(
        expect.arrayContaining(['storage:/data/storage', 'dropzone:/data/dropzone']),
      );
    }
    expect(Object.keys(compose.volumes).sort()).toEqual([
      'dropzone',
      'postgres-data',
      'redis-data',
      'storage',
    ]);
  });

  it('takes settings from env files with example values only, never inline secrets', () => {
    for (const [name, service] of Object.entries(services)) {
      for (const key of Object.keys(service.environment ?? {})) {
        expect({ name, key, secret: /KEY|PASSWORD|SECRET|TOKEN|_URL/.test(key) }).toEqual({
          name,
          key,
          secret: false,
        });
      }
    }
    const postgres = envFileOf('postgres');
    expect(postgres.POSTGRES_PASSWORD).toMatch(/example/);
    const catalog = envFileOf('catalog-api');
    expect(catalog.DATABASE_URL).toContain(
      `${postgres.POSTGRES_USER}:${postgres.POSTGRES_PASSWORD}@postgres:5432/${postgres.POSTGRES_DB}`,
    );
    expect(catalog.GLOBAL_API_KEY).toBe('');
    expect(envFileOf('migrate')).toEqual(catalog);
    const provisioner = envFileOf('provisioner-api');
    expect(provisioner.REDIS_URL).toBe('redis://redis:6379');
    expect(provisioner.PROVISIONER_API_KEY).toBe('');
    expect(provisioner.PROVISIONER_READ_API_KEYS).toBe('');
    expect(envFileOf('provisioner-worker')).toEqual(provisioner);
  });

  it('wires registration in the catalog: the worker holds the key, the catalog only its digest', () => {
    const provisioner = envFileOf('provisioner-worker');
    expect(provisioner.CATALOG_URL).toBe('http://catalog-api:3000');
    expect(provisioner.CATALOG_API_KEY).toBe('');
    const catalog = envFileOf('catalog-api');
    expect(catalog.REGISTRATION_API_KEY_SHA256).toBe('');
    expect(Object.keys(catalog)).not.toContain('CATALOG_API_KEY');
  });

  it('gives the provisioner no catalog secrets and the catalog no provisioner ones', () => {
    expect(Object.keys(envFileOf('provisioner-api'))).not.toContain('DATABASE_URL');
    expect(Object.keys(envFileOf('catalog-api'))).not.toContain('PROVISIONER_API_KEY');
  });
});

describe('Dockerfile', () => {
  const dockerfile = read('Dockerfile');
  const lines = dockerfile.split('\n').filter((line) => !line.trim().startsWith('#'));
  const froms = lines.filter((line) => /^FROM\s/i.test(line));
  const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));

  it('is multi-stage from node:24 bookworm-slim (the default base), pinned to a full version and a digest', () => {
    expect(lines.find((l) => l.startsWith('ARG NODE_BASE='))).toMatch(
      /=node:24\.\d+\.\d+-bookworm-slim@sha256:[0-9a-f]{64}$/,
    );
    expect(froms).toHaveLength(2);
    for (const from of froms) {
      expect(from).toMatch(/^FROM \$\{NODE_BASE\} AS \w+$/);
    }
  });

  it('builds with the lock in the first stage', () => {
    expect(dockerfile).toMatch(/COPY package\.json package-lock\.json/);
    expect(dockerfile).toMatch(/npm install --no-audit/);
    expect(dockerfile).toMatch(/RUN npm run build/);
  });

  it('hands npm a CA bundle only as a build secret, never in a layer', () => {
    const installs = lines.filter((l) => /NODE_EXTRA_CA_CERTS/.test(l));
    expect(installs.length).toBe(2);
    for (const line of installs)
      expect(line).toMatch(/^\s+&& NODE_EXTRA_CA_CERTS=\/run\/secrets\/npm_ca npm install/);
    expect(
      lines.filter((l) =>
        /^RUN --mount=type=secret,id=npm_ca,target=\/run\/secrets\/npm_ca/.test(l),
      ),
    ).toHaveLength(2);
    expect(lines.filter((l) => /^(ENV|COPY|ADD)\s/.test(l)).join('\n')).not.toMatch(
      /ca-certificates|npm_ca|NODE_EXTRA_CA_CERTS/,
    );
  });

  it('ships production dependencies and the compiled output only', () => {
    expect(runtime).toMatch(/npm install --omit=dev/);
    expect(runtime).toMatch(/COPY --from=build \/app\/dist \.\/dist/);
    expect(runtime).not.toMatch(/COPY (apps|libs|\.)\s/);
  });

  it('runs as a non-root user', () => {
    const users = lines.filter((line) => /^USER\s/i.test(line));
    expect(users.length).toBeGreaterThan(0);
    const last = users[users.length - 1].replace(/^USER\s+/i, '').trim();
    expect(last).not.toMatch(/^(root|0)(:|$)/);
    expect(runtime).toContain(users[users.length - 1]);
  });

  it('bakes in no secrets', () => {
    for (const line of lines.filter((l) => /^(ENV|ARG)\s/i.test(l))) {
      expect(line).not.toMatch(/KEY|PASSWORD|SECRET|TOKEN|DATABASE_URL|REDIS_URL/);
    }
  });

  it("holds glibc's mmap threshold for every process, as the benchmarks and the robustness rig read it", () => {
    // docs/decisions/malloc-mmap-threshold.md: a large import's freed memory goes back.
    expect(imageEnv()).toEqual({ GLIBC_TUNABLES: 'glibc.malloc.mmap_threshold=131072' });
  });

  it('defaults to catalog-api and documents the other three commands', () => {
    expect(runtime).toContain(
      'CMD ["node", "--max-semi-space-size=4", "--max-old-space-size=256", "dist/apps/catalog-api/apps/catalog-api/src/main.js"]',
    );
    for (const entry of [
      'dist/apps/catalog-api/apps/catalog-api/src/database/migrate.js',
      'dist/apps/provisioner/apps/provisioner/src/main.js',
      'dist/apps/provisioner/apps/provisioner/src/worker.js',
    ]) {
      expect(dockerfile).toContain(entry);
    }
  });
});

describe('.dockerignore', () => {
  it('keeps dependencies, builds, local state and secrets out of the build context', () => {
    const ignored = read('.dockerignore')
      .split('\n')
      .map((line) => line.trim());
    expect(ignored).toEqual(
      expect.arrayContaining(['node_modules', 'dist', '.git', '.env', '.data']),
    );
  });
});

describe('docker-compose.drs.yml (DRS with the nginx offload, layered on the main file)', () => {
  const drs = parse(read('docker-compose.drs.yml')) as { services: Record<string, Service> };
  const sidecar = parse(read('k8s/components/drs-offload/nginx-sidecar.yaml')) as {
    spec: {
      template: {
        spec: {
          containers: {
            image: string;
            env: { name: string; value: string }[];
            resources: { limits: { memory: string } };
            volumeMounts: { name: string; mountPath: string; readOnly?: boolean }[];
          }[];
        };
      };
    };
  };
  const nginx = sidecar.spec.template.spec.containers[0];
  const offload = drs.services['drs-offload'];

  it('runs the sidecar of the drs-offload component: its pinned image, settings and limit', () => {
    expect(withDefaults(offload.image!)).toBe(nginx.image);
    const env = Object.fromEntries(nginx.env.map((e) => [e.name, e.value]));
    for (const name of ['LISTEN', 'STORAGE_ROOT', 'PREFIX'])
      expect({ name, value: offload.environment![name] }).toEqual({ name, value: env[name] });
    // The pod's 127.0.0.1:3001 is the API's service name here.
    expect(offload.environment!.UPSTREAM).toBe(`provisioner-api:${env.UPSTREAM.split(':')[1]}`);
    expect((offload as { mem_limit?: string }).mem_limit).toBe(
      nginx.resources.limits.memory.replace('Mi', 'm'),
    );
    expect((offload as { user?: string }).user).toBe('1000:1000');
    expect((offload as { read_only?: boolean }).read_only).toBe(true);
  });

  it("reads storage read-only, with deploy/nginx's template (the one k8s copies)", () => {
    expect(offload.volumes).toEqual([
      './deploy/nginx:/etc/nginx/templates:ro',
      'storage:/data/storage:ro',
    ]);
    expect(read('deploy/nginx/drs-offload.conf.template')).toBe(
      read('k8s/components/drs-offload/drs-offload.conf.template'),
    );
    expect(offload.depends_on).toEqual({ 'provisioner-api': { condition: 'service_healthy' } });
  });

  it('turns the offload on in the API and gives every app its DRS env file, no inline secret', () => {
    expect(drs.services['provisioner-api'].environment!.DRS_BYTES_OFFLOAD).toBe('nginx');
    const files = (name: string) => (drs.services[name].env_file ?? []).map(withDefaults);
    expect(files('catalog-api')).toEqual(
      ['catalog.env', 'catalog-drs.env'].map((f) => `./deploy/compose/example/${f}`),
    );
    for (const name of ['provisioner-api', 'provisioner-worker'])
      expect(files(name)).toEqual(
        ['provisioner.env', 'provisioner-drs.env'].map((f) => `./deploy/compose/example/${f}`),
      );
    for (const file of [...files('catalog-api'), ...files('provisioner-api')])
      expect({ file, exists: existsSync(join(ROOT, file)) }).toEqual({ file, exists: true });
    for (const [name, service] of Object.entries(drs.services))
      for (const key of Object.keys(service.environment ?? {}))
        expect({ name, key, secret: /KEY$|PASSWORD|SECRET|TOKEN/.test(key) }).toEqual({
          name,
          key,
          secret: false,
        });
    // The visas' issuer is the catalog's CATALOG_SOURCE: one setting names both.
    expect(drs.services['catalog-api'].environment!.CATALOG_SOURCE).toBe(
      drs.services['provisioner-api'].environment!.DRS_VISA_ISSUER,
    );
  });
});
