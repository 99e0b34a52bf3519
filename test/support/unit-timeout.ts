// jest reads `testTimeout` only from the top-level config, never from a project's: the unit
// project's default is set here (a test that waits longer says so itself).
import { UNIT_TEST_MS } from './timeouts';

jest.setTimeout(UNIT_TEST_MS);
