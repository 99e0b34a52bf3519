/**
 * What starting a Nest app (compiling its module, init, connection pools, migrations) may take
 * on a loaded 2-core machine (load average 13), where jest's 5 s default is far too short.
 * A hook or test that starts apps waits this long; anything that waits longer says so itself.
 */
export const APP_START_MS = 30_000;

/**
 * What a unit test's own work (parsing, hashing, a few hundred thousand entries in memory; a
 * second on a quiet machine) may take on that machine, where jest's 5 s default failed one.
 */
export const UNIT_TEST_MS = 15_000;

/**
 * What a unit test on real threads, files or sockets (a copy of hundreds of files, a scan on
 * the source-scan thread, megabytes over a socket) may take on that machine: seconds.
 */
export const REAL_IO_MS = 30_000;

/** What booting an app as its own process through ts-node (no build) may take there. */
export const PROCESS_START_MS = 90_000;
