/**
 * `--help` (or `-h`) anywhere among a command's arguments: prints its usage and tells the caller
 * to stop, before anything is read, opened or written.
 */
export function answersHelp(
  usage: string,
  argv: readonly string[] = process.argv.slice(2),
): boolean {
  if (!argv.includes('--help') && !argv.includes('-h')) return false;
  process.stdout.write(`${usage.trim()}\n`);
  return true;
}

/**
 * The directory a command's relative file names are read against: the user's. `npm run <script>`
 * runs in the repository's root and gives the directory it was typed in as INIT_CWD; only when
 * this process is that very script (`npm_lifecycle_event`), as a variable inherited from another
 * npm script (`npm test` spawning the command) is not where this command was typed.
 */
export function userDirectory(
  script: string,
  env: NodeJS.ProcessEnv = process.env,
  cwd: string = process.cwd(),
): string {
  return env.npm_lifecycle_event === script && env.INIT_CWD ? env.INIT_CWD : cwd;
}
