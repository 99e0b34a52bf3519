import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const SCRIPT = join(__dirname, '..', 'scripts', 'dev', 'import-graph.mjs');
/** Each case starts node processes that load TypeScript's parser: seconds on a busy machine. */
const PROCESS_TIMEOUT = 60_000;

/** A tree that passes the check: a library, foundation, features, root files, an entry point. */
const CLEAN: Record<string, string> = {
  'libs/errors/src/index.ts': 'export class AppError extends Error {}\n',
  'apps/catalog-api/src/main.ts': "import { AppModule } from './app.module';\nvoid AppModule;\n",
  'apps/catalog-api/src/app.module.ts':
    "import { Module } from '@nestjs/common';\nimport { ProjectsModule } from './projects/projects.module';\n" +
    '@Module({ imports: [ProjectsModule] })\nexport class AppModule {}\n',
  'apps/catalog-api/src/catalog-entities.ts':
    "import { Project } from './projects/project.entity';\nexport const catalogEntities = [Project];\n",
  'apps/catalog-api/src/database/migrate.ts':
    "import { catalogEntities } from '../catalog-entities';\nvoid catalogEntities;\n",
  'apps/catalog-api/src/common/sql-params.ts':
    "import { AppError } from '@app/errors';\nexport const x = AppError;\n",
  'apps/catalog-api/src/projects/project.entity.ts':
    "import { Entity } from 'typeorm';\nimport { User } from '../users/user.entity';\n" +
    '@Entity()\nexport class Project {\n  owner?: User;\n}\n',
  'apps/catalog-api/src/projects/projects.module.ts':
    "import { Module } from '@nestjs/common';\nimport { ProjectsService } from './projects.service';\n" +
    '@Module({ providers: [ProjectsService] })\nexport class ProjectsModule {}\n',
  'apps/catalog-api/src/projects/projects.service.ts':
    "import { Injectable } from '@nestjs/common';\nimport { x } from '../common/sql-params';\n" +
    '@Injectable()\nexport class ProjectsService {\n  y = x;\n}\n',
  'apps/catalog-api/src/projects/project-rules.ts': 'export const MAX_TITLE = 300;\n',
  'apps/catalog-api/src/users/user.entity.ts':
    "import { Entity } from 'typeorm';\n@Entity()\nexport class User {}\n",
  // A repository by its base class; a service that is a plain @Injectable.
  'apps/catalog-api/src/users/postgres-users.repository.ts':
    "import { UsersRepository } from './users.repository';\nexport class PostgresUsers extends UsersRepository {}\n",
  'apps/catalog-api/src/users/users.repository.ts': 'export abstract class UsersRepository {}\n',
  'apps/catalog-api/src/users/user-metrics.service.ts':
    "import { Injectable } from '@nestjs/common';\n@Injectable()\nexport class UserMetrics {}\n",
  'apps/catalog-api/src/users/visa-keys.ts':
    "import { Injectable } from '@nestjs/common';\n@Injectable()\nexport class VisaKeys {}\n",
};

interface Run {
  status: number | null;
  out: string;
}

/** Writes `files` into a fresh tree and runs `import-graph.mjs --check --list` on it. */
function check(files: Record<string, string>): Run {
  const root = mkdtempSync(join(tmpdir(), 'import-graph-'));
  try {
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    }
    const run = spawnSync(process.execPath, [SCRIPT, '--root', root, '--check', '--list'], {
      encoding: 'utf8',
    });
    return { status: run.status, out: run.stdout + run.stderr };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

describe('import-graph.mjs --check (the layout rules of docs/architecture.md)', () => {
  it(
    'passes a tree without folder cycles, upward imports or misnamed files',
    () => {
      const run = check(CLEAN);
      expect(run.out).toContain('folder cycles: 0\nupward imports: 0\nmisnamed files: 0');
      expect(run.status).toBe(0);
    },
    PROCESS_TIMEOUT,
  );

  it(
    'fails on a folder cycle, naming the imports that tie it',
    () => {
      const run = check({
        ...CLEAN,
        'apps/catalog-api/src/users/user.entity.ts':
          "import { Entity } from 'typeorm';\nimport type { Project } from '../projects/project.entity';\n" +
          '@Entity()\nexport class User {\n  projects?: Project[];\n}\n',
      });
      expect(run.status).toBe(1);
      expect(run.out).toContain('folder cycles: 1 (catalog-api:projects <-> catalog-api:users)');
      expect(run.out).toContain(
        'apps/catalog-api/src/users/user.entity.ts -> apps/catalog-api/src/projects/project.entity.ts',
      );
    },
    PROCESS_TIMEOUT,
  );

  it(
    'fails on an upward import: a foundation folder importing a feature, a library an app',
    () => {
      const run = check({
        ...CLEAN,
        'apps/catalog-api/src/common/sql-params.ts':
          "import { MAX_TITLE } from '../projects/project-rules';\nexport const x = MAX_TITLE;\n",
        'libs/errors/src/index.ts':
          "import { x } from '../../../apps/catalog-api/src/common/sql-params';\nexport const y = x;\n",
      });
      expect(run.status).toBe(1);
      expect(run.out).toContain('upward imports: 2');
      expect(run.out).toContain(
        'apps/catalog-api/src/common/sql-params.ts -> apps/catalog-api/src/projects/project-rules.ts',
      );
      expect(run.out).toContain(
        'libs/errors/src/index.ts -> apps/catalog-api/src/common/sql-params.ts',
      );
    },
    PROCESS_TIMEOUT,
  );

  it(
    'fails on misnamed files: a role without its suffix, a suffix that is no role or not played',
    () => {
      const run = check({
        ...CLEAN,
        // A service in a plain file.
        'apps/catalog-api/src/projects/project-rules.ts':
          "import { Injectable } from '@nestjs/common';\n@Injectable()\nexport class ProjectRulesService {}\n",
        // An entity named as a repository.
        'apps/catalog-api/src/users/users.repository.ts':
          "import { Entity } from 'typeorm';\n@Entity()\nexport class Group {}\n",
        // A suffix that names no role.
        'apps/catalog-api/src/users/user.helpers.ts': 'export const helper = 1;\n',
        // An @Injectable with no role word in a file not named for it.
        'apps/catalog-api/src/users/keys.ts':
          "import { Injectable } from '@nestjs/common';\n@Injectable()\nexport class VisaSigner {}\n",
      });
      expect(run.status).toBe(1);
      expect(run.out).toContain('misnamed files: 4');
      expect(run.out).toContain(
        'projects/project-rules.ts: plays .service but is named without a role suffix',
      );
      expect(run.out).toContain(
        'users/users.repository.ts: plays .entity but is named .repository',
      );
      expect(run.out).toContain('users/user.helpers.ts: ".helpers" is no role suffix');
      expect(run.out).toContain('users/keys.ts: the @Injectable VisaSigner has no role word');
    },
    PROCESS_TIMEOUT,
  );

  it(
    'checks only the apps given with --app',
    () => {
      const root = mkdtempSync(join(tmpdir(), 'import-graph-'));
      try {
        for (const [path, text] of Object.entries({
          ...CLEAN,
          'apps/provisioner/src/queue/queue.helpers.ts': 'export const x = 1;\n',
        })) {
          mkdirSync(dirname(join(root, path)), { recursive: true });
          writeFileSync(join(root, path), text);
        }
        const run = (...apps: string[]) =>
          spawnSync(
            process.execPath,
            [SCRIPT, '--root', root, '--check', ...apps.flatMap((a) => ['--app', a])],
            {
              encoding: 'utf8',
            },
          ).status;
        expect(run('catalog-api', 'libs')).toBe(0);
        expect(run('provisioner')).toBe(1);
        expect(run()).toBe(1);
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    },
    PROCESS_TIMEOUT,
  );
});
