// jest reads `testTimeout` only from the top-level config, never from a project's: without this
// file the e2e project ran on the 5 s default. Every e2e test and hook starts or drives apps on
// real services; this is their default (a test that waits longer says so itself).
import { APP_START_MS } from './timeouts';

jest.setTimeout(APP_START_MS);
