import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..');

interface Verdict {
  file: string;
  source: string;
  messages: string[];
}

/**
 * Lints one import line as if it were written in `file`, with the repository's eslint.config.mjs
 * and only its import rule (the type-aware rules need files on disk). ESLint loads its config as
 * an ES module, which jest cannot: it runs in a node process of its own.
 */
function lintImports(cases: { file: string; source: string }[]): Verdict[] {
  const script = `
    const { ESLint } = await import('eslint');
    const eslint = new ESLint({
      cwd: process.cwd(),
      overrideConfig: { languageOptions: { parserOptions: { projectService: false } } },
      ruleFilter: ({ ruleId }) => ruleId === 'no-restricted-imports',
    });
    const verdicts = [];
    for (const { file, source } of JSON.parse(process.env.CASES_UNDER_TEST)) {
      const [result] = await eslint.lintText(source + '\\n', { filePath: file });
      verdicts.push({ file, source, messages: result.messages.map((m) => m.ruleId + ': ' + m.message) });
    }
    process.stdout.write(JSON.stringify(verdicts));
  `;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: ROOT,
    env: { ...process.env, CASES_UNDER_TEST: JSON.stringify(cases) },
    encoding: 'utf8',
  });
  return JSON.parse(out) as Verdict[];
}

/** Import lines as written in a file of each layer: those the rules refuse, and those they allow. */
const CASES: Record<string, { refused: string[]; allowed: string[] }> = {
  'libs/platform/src/layering-fixture.ts': {
    refused: [
      "import { x } from '../../../apps/catalog-api/src/app.module';",
      "import { x } from 'apps/provisioner/src/main';",
      "export { x } from '../../../apps/provisioner/src/main';",
      "import { x } from '@app/catalog-api';",
    ],
    allowed: ["import { x } from '@app/errors';", "import { x } from './logging.module';"],
  },
  'apps/catalog-api/src/datasets/layering-fixture.ts': {
    refused: [
      "import { x } from '../../../provisioner/src/imports/import-record';",
      "import { x } from '../../../../apps/provisioner/src/main';",
    ],
    allowed: [
      "import { x } from '@app/platform';",
      "import { x } from '../catalog-imports/shape-validators';",
    ],
  },
  'apps/catalog-api/test/layering-fixture.e2e-spec.ts': {
    refused: ["import { x } from '../../provisioner/test/support/provisioner-e2e';"],
    allowed: ["import { x } from '../../../test/support/catalog-app';"],
  },
  'apps/catalog-api/src/users/layering-fixture.controller.ts': {
    refused: [
      "import { UsersRepository } from './users.repository';",
      "import { PeopleRepository as People } from '../people/people.repository';",
      "import { x } from '../../../provisioner/src/imports/import-record';",
    ],
    allowed: [
      "import { UsersService } from './users.service';",
      // A repository file's declarations for its callers: the filters the SQL and DTO share.
      "import { USER_FILTERS } from './users.repository';",
    ],
  },
  'apps/provisioner/src/imports/layering-fixture.controller.ts': {
    refused: [
      "import { ImportRecordsRepository } from './import-records.repository';",
      "import { x } from '../../../catalog-api/src/http-app';",
    ],
    allowed: ["import { x } from './imports.service';"],
  },
  'apps/provisioner/src/imports/layering-fixture.ts': {
    refused: [
      "import { x } from '../../../catalog-api/src/http-app';",
      "import type { X } from '../../../../apps/catalog-api/src/app.module';",
      "import { x } from '../sources/dataset-directory/manifest';",
      "import { x } from '../import-pipeline/copying/copy-thread-pool';",
      "import { x } from '../import-pipeline/copying/index';",
    ],
    allowed: [
      "import { x } from '@app/auth';",
      "import { x } from '../sources/source-system';",
      "import { x } from '../import-pipeline/copying';",
    ],
  },
  'apps/provisioner/src/import-pipeline/layering-fixture.step.ts': {
    refused: ["import { x } from './copying/hashing-copy';"],
    allowed: ["import { x } from './copying';", "import { x } from './import-errors';"],
  },
  'apps/provisioner/src/import-pipeline/copying/layering-fixture.ts': {
    refused: ["import { x } from '../../sources/dataset-directory/manifest';"],
    allowed: ["import { x } from './copy-batch';", "import { x } from '../import-errors';"],
  },
};
const casesOf = (kind: 'refused' | 'allowed') =>
  Object.entries(CASES).flatMap(([file, lines]) => lines[kind].map((source) => ({ file, source })));
const refused = casesOf('refused');
const allowed = casesOf('allowed');

describe('eslint layering rules (eslint.config.mjs)', () => {
  let verdicts: Verdict[];

  // A node process loading ESLint and typescript-eslint: seconds on a busy machine.
  beforeAll(() => {
    verdicts = lintImports([...refused, ...allowed]);
  }, 60_000);

  it('refuse a library importing an app, either app importing the other, and a way past the face of sources/ or of the copy engine', () => {
    const got = verdicts.slice(0, refused.length);
    for (const verdict of got) {
      expect(verdict).toEqual({
        file: verdict.file,
        source: verdict.source,
        messages: [expect.stringMatching(/^no-restricted-imports: .*(never import|share code)/)],
      });
    }
    expect(got).toHaveLength(refused.length);
  });

  it('let libraries import libraries and apps import libraries and themselves', () => {
    expect(verdicts.slice(refused.length)).toEqual(allowed.map((c) => ({ ...c, messages: [] })));
  });
});
