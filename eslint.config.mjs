// Lint: typescript-eslint's recommended rules plus the promise-aware ones that catch
// forgotten awaits and promises passed where a callback's result is ignored, strict equality,
// switches that handle every member of a union, and the layering: libraries never import the
// apps, and neither app imports the other (test/eslint-layering.spec.ts proves each rule fires).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * no-restricted-imports matches the import string, not the resolved file: each pattern names
 * both spellings of a way in, a relative path through the app's folder and a path alias.
 */
const importsOf = (message, ...regexes) => [
  'error',
  { patterns: regexes.map((regex) => ({ regex, message })) },
];
/** `apps/x`, `../apps/x`, `../../provisioner/src/x`: a path that enters the app's folder. */
const intoApp = (app) => `(^|/)(apps/${app}|\\.\\./${app}/(src|test))(/|$)`;

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
      'no-restricted-imports': importsOf(
        'Libraries never import the apps: move what both need into a library.',
        '(^|/)apps(/|$)',
        // Only the libraries have aliases (tsconfig.base.json); any other @app/ name is an app.
        '^@app/(?!(errors|auth|platform)$)',
      ),
    },
  },
  {
    files: ['apps/catalog-api/**'],
    rules: {
      'no-restricted-imports': importsOf(
        'catalog-api never imports the provisioner: share code through a library.',
        intoApp('provisioner'),
        '^@app/provisioner(/|$)',
      ),
    },
  },
  {
    files: ['apps/provisioner/**'],
    rules: {
      'no-restricted-imports': importsOf(
        'The provisioner never imports catalog-api: share code through a library.',
        intoApp('catalog-api'),
        '^@app/catalog-api(/|$)',
      ),
    },
  },
  {
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly', URL: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', Buffer: 'readonly', __dirname: 'readonly', module: 'writable', require: 'readonly', fetch: 'readonly', AbortSignal: 'readonly' },
    },
  },
);
