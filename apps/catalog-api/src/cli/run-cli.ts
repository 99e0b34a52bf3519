import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { existsSync, readFileSync } from 'node:fs';
import { open, rm } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import {
  AppError,
  fromDatabaseConflict,
  isDependencyUnavailable,
  ServiceUnavailableError,
} from '@app/errors';
import { decodeUtf8, SettingsError, StartRefused } from '@app/platform';
import { CatalogAppModule } from '../app.module';
import { CatalogSettings, loadCatalogSettings } from '../config/catalog.settings';
import { probeDatabase } from '../database/database.repository';
import { CliArgs, CliCommand, CliUsageError, parseArgs } from './cli-command';
import { CLI_COMMANDS } from './commands';

export const EXIT_OK = 0;
export const EXIT_BAD_INPUT = 1;
export const EXIT_DATABASE_UNREACHABLE = 2;

export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  cwd: string;
}

function alreadyThere(file: string): CliUsageError {
  return new CliUsageError(`${file} exists: nothing overwritten (choose another --out)`);
}

/** `stream` into a file created for it (never over one that exists); removed if not filled. */
export async function writeNewFile(
  file: string,
  stream: NodeJS.ReadableStream,
): Promise<{ file: string; bytes: number }> {
  const handle = await open(file, 'wx').catch((error: NodeJS.ErrnoException) => {
    // The stream's producer is stopped: it must not read on after the command has ended.
    (stream as NodeJS.ReadableStream & { destroy(): void }).destroy();
    throw error.code === 'EEXIST' ? alreadyThere(file) : error;
  });
  const out = handle.createWriteStream();
  try {
    await pipeline(stream, out);
  } catch (error) {
    await rm(file, { force: true });
    throw error;
  }
  return { file, bytes: out.bytesWritten };
}

function help(commands: CliCommand[]): string {
  const width = commands.reduce((w, c) => Math.max(w, c.name.length), 0);
  return [
    'Usage: npm run catalog -- <command> [arguments]   (compiled: node dist/.../cli/catalog.cli.js)',
    '',
    'Administers the catalog through the same services as the HTTP API (no HTTP involved).',
    'Settings come from the environment (DATABASE_URL, ...), as for the server.',
    '',
    'Commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'Run `npm run catalog -- <command> --help` for its arguments.',
    'Exit codes: 0 done, 1 bad input (problems listed on stderr), 2 database or identity provider unreachable.',
  ].join('\n');
}

function describeError(error: AppError): string {
  const lines = [error.description];
  const problems = (
    error.more as {
      errors?: { index?: number; field?: string; parameter?: string; message: string }[];
    }
  ).errors;
  for (const p of problems ?? []) {
    const where = [p.index === undefined ? undefined : `item ${p.index}`, p.field ?? p.parameter]
      .filter((part) => part !== undefined)
      .join(' ');
    lines.push(`  - ${where ? `${where}: ` : ''}${p.message}`);
  }
  return lines.join('\n');
}

/** How long the tool waits for the database before exit 2 (the ORM would retry for half a minute). */
const DATABASE_PROBE_TIMEOUT_MS = 5000;

/**
 * The command-line tool: parses the command, boots the catalog's Nest application context
 * (services only, no HTTP listener), runs the command, prints its result as JSON.
 */
export async function runCli(
  argv: string[],
  env: NodeJS.ProcessEnv,
  io: CliIo,
  commands: CliCommand[] = CLI_COMMANDS,
): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.out(help(commands));
    return EXIT_OK;
  }
  const command = commands.find((c) => c.name === name);
  if (command === undefined) {
    io.err(`unknown command "${name}"\n\n${help(commands)}`);
    return EXIT_BAD_INPUT;
  }
  const args: CliArgs = parseArgs(rest);
  if (args.options.help === true) {
    io.out(`Usage: npm run catalog -- ${command.name} ${command.usage}\n\n${command.summary}`);
    return EXIT_OK;
  }

  let settings: CatalogSettings;
  try {
    // The tool never migrates (`npm run migrate` does) nor sends webhooks, and keeps stdout for its JSON.
    settings = loadCatalogSettings({
      ...env,
      MIGRATIONS_RUN: 'false',
      WEBHOOK_DELIVERY: 'false',
      LOG_LEVEL: env.CLI_LOG_LEVEL ?? 'silent',
    });
  } catch (error) {
    io.err(error instanceof SettingsError ? error.message : String(error));
    return EXIT_BAD_INPUT;
  }
  try {
    await probeDatabase(settings.DATABASE_URL, DATABASE_PROBE_TIMEOUT_MS);
  } catch (error) {
    io.err(`cannot reach the database: ${(error as Error).message}`);
    return EXIT_DATABASE_UNREACHABLE;
  }

  let app: INestApplicationContext;
  try {
    app = await NestFactory.createApplicationContext(CatalogAppModule.forRoot(settings), {
      logger: false,
    });
  } catch (error) {
    // A session URL on a transaction-mode pooler (the sync's and the demo load's locks).
    if (!(error instanceof StartRefused)) throw error;
    io.err(error.message);
    return EXIT_BAD_INPUT;
  }
  try {
    const result = await command.run(
      {
        app,
        actor: { kind: 'cli', name: env.CATALOG_CLI_USER ?? userInfo().username },
        readFile: (path) => decodeUtf8(readFileSync(resolve(io.cwd, path)), path),
        newFile: (path) => {
          const file = resolve(io.cwd, path);
          if (existsSync(file)) throw alreadyThere(file);
          return file;
        },
        writeFile: (path, stream) => writeNewFile(resolve(io.cwd, path), stream),
      },
      args,
    );
    io.out(JSON.stringify(result, null, 2));
    return EXIT_OK;
  } catch (thrown) {
    // A command racing another writer gets the API's 409, not a stack trace.
    const error = fromDatabaseConflict(thrown) ?? thrown;
    if (error instanceof CliUsageError) {
      io.err(
        `${command.name}: ${error.message}\nUsage: npm run catalog -- ${command.name} ${command.usage}`,
      );
      return EXIT_BAD_INPUT;
    }
    if (error instanceof AppError && error.status < 500) {
      io.err(describeError(error));
      return EXIT_BAD_INPUT;
    }
    if (error instanceof ServiceUnavailableError) {
      io.err(`cannot reach a dependency: ${error.description}`);
      return EXIT_DATABASE_UNREACHABLE;
    }
    if (isDependencyUnavailable(error)) {
      io.err(`cannot reach the database: ${(error as Error).message}`);
      return EXIT_DATABASE_UNREACHABLE;
    }
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      io.err((error as Error).message);
      return EXIT_BAD_INPUT;
    }
    throw error;
  } finally {
    await app.close();
  }
}
