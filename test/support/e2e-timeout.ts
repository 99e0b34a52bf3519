// jest reads `testTimeout` only from the top-level config, never from a project's: without this
// file the e2e project ran on the 5 s default. Starting an app on a fresh database waits on
// migrations and connection pools, which on a busy 2-core machine takes seconds; this is the
// default for every test and hook of the e2e project (a test that waits longer says so itself).
jest.setTimeout(30_000);
