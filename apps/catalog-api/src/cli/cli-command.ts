import type { INestApplicationContext } from '@nestjs/common';
import type { AuditActor } from '../audit/audit.service';

/** `--name value`, `--name=value` and bare `--flag` options, plus positional arguments. */
export interface CliArgs {
  positional: string[];
  options: Record<string, string | true>;
}

export interface CliContext {
  /** The catalog's Nest services, without HTTP. */
  app: INestApplicationContext;
  /** Recorded in the audit trail as the author of every change. */
  actor: AuditActor;
  /** Reads a file named on the command line (relative to the working directory). */
  readFile(path: string): string;
  /**
   * A file named on the command line to be written, as an absolute path: CliUsageError when it
   * exists already (asked before the work that fills it, so nothing is done for a refusal).
   */
  newFile(path: string): string;
  /**
   * Writes a stream to a new file (relative to the working directory), never over an existing
   * one (CliUsageError); a file the stream failed to fill is removed. Its absolute path and size.
   */
  writeFile(path: string, stream: NodeJS.ReadableStream): Promise<{ file: string; bytes: number }>;
}

/**
 * One command of `npm run catalog`. Add a command by writing a file that exports one of these
 * and appending it to `CLI_COMMANDS` in `commands/index.ts`.
 */
export interface CliCommand {
  name: string;
  /** Arguments after the name, e.g. `<file> [--kind partners|projects|...]`. */
  usage: string;
  summary: string;
  /** The result is printed as JSON. Throw CliUsageError or an AppError for bad input. */
  run(ctx: CliContext, args: CliArgs): Promise<unknown>;
}

/** Bad command-line input (exit code 1). */
export class CliUsageError extends Error {}

export function parseArgs(argv: string[]): CliArgs {
  const args: CliArgs = { positional: [], options: {} };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('--')) {
      args.positional.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    if (eq > 0) {
      args.options[arg.slice(2, eq)] = arg.slice(eq + 1);
    } else if (i + 1 < argv.length && !argv[i + 1].startsWith('--')) {
      args.options[arg.slice(2)] = argv[++i];
    } else {
      args.options[arg.slice(2)] = true;
    }
  }
  return args;
}

/** A string option, required unless `optional`. */
export function option(args: CliArgs, name: string, optional: true): string | undefined;
export function option(args: CliArgs, name: string, optional?: false): string;
export function option(args: CliArgs, name: string, optional = false): string | undefined {
  const value = args.options[name];
  if (value === undefined) {
    if (optional) return undefined;
    throw new CliUsageError(`--${name} is required`);
  }
  if (value === true) throw new CliUsageError(`--${name} needs a value`);
  return value;
}

export function positional(args: CliArgs, index: number, name: string): string {
  const value = args.positional[index];
  if (value === undefined) throw new CliUsageError(`<${name}> is required`);
  return value;
}

/** Only these options are accepted: a typo must not be ignored silently. */
export function allowOptions(args: CliArgs, names: string[]): void {
  const unknown = Object.keys(args.options).filter((name) => !names.includes(name));
  if (unknown.length > 0)
    throw new CliUsageError(`unknown option ${unknown.map((n) => `--${n}`).join(', ')}`);
}

/** `true`/`false` for a boolean option value, or a bare flag meaning true. */
export function booleanOption(args: CliArgs, name: string): boolean | undefined {
  const value = args.options[name];
  if (value === undefined) return undefined;
  if (value === true || value === 'true') return true;
  if (value === 'false') return false;
  throw new CliUsageError(`--${name} must be true or false`);
}

/** An integer option value; the service validates its range. */
export function integerOption(args: CliArgs, name: string): number | string | undefined {
  const value = option(args, name, true);
  return value !== undefined && /^-?\d+$/.test(value) ? Number(value) : value;
}

export function listOption(args: CliArgs, name: string): string[] | undefined {
  const value = option(args, name, true);
  return value === undefined
    ? undefined
    : value
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '');
}
