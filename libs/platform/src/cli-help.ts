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
