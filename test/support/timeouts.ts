/**
 * What starting a Nest app (compiling its module, init, connection pools, migrations) may take
 * on a loaded 2-core machine (load average 13, where 90 hooks failed on jest's 5 s default).
 * A hook or test that starts apps waits this long; anything that waits longer says so itself.
 */
export const APP_START_MS = 30_000;
