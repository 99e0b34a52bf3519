// Lint: typescript-eslint's recommended rules plus the promise-aware ones that catch
// forgotten awaits and promises passed where a callback's result is ignored, strict equality,
// switches that handle every member of a union, and the layering: libraries never import the
// apps, neither app imports the other, and controllers never import a repository (they call
// services) (test/eslint-layering.spec.ts proves each rule fires).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * no-restricted-imports matches the import string, not the resolved file: each pattern names
 * both spellings of a way in, a relative path through the app's folder and a path alias.
 */
const importsOf = (...groups) => [
  'error',
  {
    patterns: groups.flatMap(({ message, regexes, importNamePattern }) =>
      regexes.map((regex) => ({ regex, message, ...(importNamePattern && { importNamePattern }) })),
    ),
  },
];
/** `apps/x`, `../apps/x`, `../../provisioner/src/x`: a path that enters the app's folder. */
const intoApp = (app) => `(^|/)(apps/${app}|\\.\\./${app}/(src|test))(/|$)`;
const notIntoProvisioner = {
  message: 'catalog-api never imports the provisioner: share code through a library.',
  regexes: [intoApp('provisioner'), '^@app/provisioner(/|$)'],
};
const notIntoCatalog = {
  message: 'The provisioner never imports catalog-api: share code through a library.',
  regexes: [intoApp('catalog-api'), '^@app/catalog-api(/|$)'],
};
/** sources/ speaks through source-system.ts: how dataset-directory/ is split stays its own. */
const throughSourcesFace = {
  message: 'Other folders never import dataset-directory/ files: use sources/source-system.',
  regexes: ['(^|/)sources/dataset-directory(/|$)'],
};
/**
 * import-pipeline/copying/ (the copy engine) speaks through its index.ts: the steps and the
 * worker's module see the pool, the walks and the hashing copy, not how the engine is split.
 */
const throughCopyingFace = {
  message: 'Other folders never import import-pipeline/copying/ files: use its face, import-pipeline/copying.',
  regexes: ['(^|/)copying/.'],
};
/**
 * A controller maps routes to service calls: it never injects a repository. What a repository
 * file declares for its callers (a list's filters, a page size, a row type) stays importable.
 */
const noRepositories = {
  message: 'Controllers never import a repository: they call services (docs/architecture.md).',
  regexes: ['\\.repository(\\.(js|ts))?$'],
  importNamePattern: 'Repository$',
};

export default tseslint.config(
  { ignores: ['dist/**', '.bench/**', 'node_modules/**', 'coverage/**', '.data/**', 'data/**', '**/*.d.mts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/return-await': ['error', 'in-try-catch'],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
      '@typescript-eslint/consistent-type-imports': 'off',
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { requireDefaultForNonUnion: true }],
      eqeqeq: ['error', 'always'],
      'no-console': 'off',
    },
  },
  {
    // A call's arguments go on the stack: spreading an array whose length input decides into
    // one (`push(...items)`, `Math.max(...sizes)`, `fn.apply(null, items)`) overflows it at
    // about 120,000 elements (issue 30). Loop, or reduce, instead; a spread of a list whose
    // length the code fixes may be allowed where it stands, with the reason.
    files: ['apps/*/src/**/*.ts', 'libs/*/src/**/*.ts'],
    ignores: ['**/*.spec.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: 'CallExpression > SpreadElement, NewExpression > SpreadElement',
          message:
            'No spread into call arguments: an input-sized array overflows the stack. Loop or reduce instead.',
        },
        {
          selector:
            "CallExpression[callee.property.name='apply'][arguments.length=2], CallExpression[callee.object.name='Reflect'][callee.property.name='apply']",
          message:
            'No Function.prototype.apply with an argument list: an input-sized array overflows the stack.',
        },
      ],
    },
  },
  {
    files: ['libs/**'],
    rules: {
      'no-restricted-imports': importsOf({
        message: 'Libraries never import the apps: move what both need into a library.',
        regexes: [
          '(^|/)apps(/|$)',
          // Only the libraries have aliases (tsconfig.base.json); any other @app/ name is an app.
          '^@app/(?!(errors|auth|platform|crypt4gh)$)',
        ],
      }),
    },
  },
  // A later block's no-restricted-imports replaces an earlier one: each block lists all of its files' groups.
  { files: ['apps/catalog-api/**'], rules: { 'no-restricted-imports': importsOf(notIntoProvisioner) } },
  {
    files: ['apps/provisioner/**'],
    rules: { 'no-restricted-imports': importsOf(notIntoCatalog, throughSourcesFace, throughCopyingFace) },
  },
  {
    files: ['apps/catalog-api/**/*.controller.ts'],
    rules: { 'no-restricted-imports': importsOf(notIntoProvisioner, noRepositories) },
  },
  {
    files: ['apps/provisioner/**/*.controller.ts'],
    rules: {
      'no-restricted-imports': importsOf(notIntoCatalog, throughSourcesFace, throughCopyingFace, noRepositories),
    },
  },
  {
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly', URL: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', Buffer: 'readonly', __dirname: 'readonly', module: 'writable', require: 'readonly', fetch: 'readonly', AbortSignal: 'readonly' },
    },
  },
);
