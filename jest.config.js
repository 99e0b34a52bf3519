// Two projects: unit specs beside the code, e2e specs against real Postgres and Redis.
// The global setup finds (or starts) those services once and gives each run its own names.
const shared = {
  testEnvironment: 'node',
  // Where jest looks for files: not the whole checkout, whose .bench/ holds a running benchmark's
  // million-file datasets (crawling them ran jest out of memory before any test started).
  roots: ['<rootDir>/apps', '<rootDir>/libs', '<rootDir>/test'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.json' }],
    // jose 6 ships only ES modules, which jest on Node 20 cannot require: compile it to CommonJS.
    '^.+/node_modules/jose/.+\\.js$': [
      'ts-jest',
      { tsconfig: { allowJs: true, module: 'commonjs', moduleResolution: 'node10', target: 'ES2022' } },
    ],
  },
  transformIgnorePatterns: ['/node_modules/(?!jose/)'],
  moduleFileExtensions: ['ts', 'js', 'json'],
  moduleNameMapper: {
    '^@app/(errors|auth|platform|crypt4gh)$': '<rootDir>/libs/$1/src',
    '^@app/platform/telemetry$': '<rootDir>/libs/platform/src/telemetry',
  },
};

/** @type {import('jest').Config} */
module.exports = {
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  maxWorkers: 2,
  reporters: ['default', '<rootDir>/test/support/summary-reporter.js'],
  projects: [
    {
      ...shared,
      displayName: 'unit',
      rootDir: __dirname,
      // The unit default time-out for a loaded machine (test/support/timeouts.ts, UNIT_TEST_MS).
      setupFilesAfterEnv: ['<rootDir>/test/support/unit-timeout.ts'],
      testMatch: ['<rootDir>/{apps,libs}/*/src/**/*.spec.ts', '<rootDir>/test/**/*.spec.ts'],
    },
    {
      ...shared,
      displayName: 'e2e',
      rootDir: __dirname,
      // A safety limit, not a speed check (speed targets live in `npm run bench`); set in a
      // setup file because jest ignores `testTimeout` in a project.
      setupFilesAfterEnv: ['<rootDir>/test/support/e2e-timeout.ts'],
      // test/e2e: specs that run both apps together (the layering lint keeps each app's own
      // tests inside that app).
      testMatch: ['<rootDir>/apps/*/test/**/*.e2e-spec.ts', '<rootDir>/test/e2e/**/*.e2e-spec.ts'],
    },
  ],
};
