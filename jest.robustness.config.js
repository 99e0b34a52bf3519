// `npm run test:robustness`: hostile input, faults and load against real services. Kept out of
// `npm test` (the suites take minutes and start their own Postgres and Redis servers); same
// global setup, transform and aliases as the main config.
// A CommonJS config reading the main one: require is the only way in (jest loads it as CJS).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const main = require('./jest.config');

const e2e = main.projects.find((project) => project.displayName === 'e2e');

/** @type {import('jest').Config} */
module.exports = {
  globalSetup: main.globalSetup,
  globalTeardown: main.globalTeardown,
  reporters: main.reporters,
  // The suites start servers and kill processes: one at a time keeps them from starving each
  // other on a small machine.
  maxWorkers: 1,
  // Each test drives thousands of requests or waits out restarts; its loops have their own bounds.
  testTimeout: 240_000,
  projects: [
    {
      ...e2e,
      displayName: 'robustness',
      // Not the e2e project's 30 s default: the top-level testTimeout above applies. Every
      // file's app processes are held to 75 % of their Kubernetes memory limits.
      setupFilesAfterEnv: ['<rootDir>/test/robustness/support/memory-limits.ts'],
      testMatch: ['<rootDir>/test/robustness/**/*.robust-spec.ts'],
    },
  ],
};
