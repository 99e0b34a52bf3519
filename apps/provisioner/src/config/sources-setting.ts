import { registerDecorator, ValidationArguments } from 'class-validator';
import { resolve } from 'node:path';
import { parseSources, SourceConfig } from './source-config';

export const DEFAULT_DROPZONE_ROOT = 'data/dropzone';

/** SOURCES parsed with relative paths resolved against the working directory (the repo root). */
export function sourcesFromSetting(json: string | undefined): {
  sources: SourceConfig[];
  errors: string[];
} {
  return parseSources(json, resolve(DEFAULT_DROPZONE_ROOT), (p) => resolve(p));
}

/**
 * What SOURCES cannot do with the storage settings beside it. Validators of an S3 inbox read the
 * staged files where they lie, so they need filesystem storage in plain text: with S3 storage or
 * in archive mode a dataset's bytes are copied from the source for them
 * (validation/materialise-data.ts), which reads a local source only.
 */
function storageProblems(sources: SourceConfig[], settings: Record<string, unknown>): string[] {
  const copied = settings.STORAGE_BACKEND === 's3' || settings.STORAGE_ENCRYPTION === 'crypt4gh';
  if (!copied) return [];
  return sources
    .filter((source) => source.type === 's3' && (source.validators?.length ?? 0) > 0)
    .map(
      (source) =>
        `${source.name}: validators of an s3 source need STORAGE_BACKEND=filesystem without archive mode (STORAGE_ENCRYPTION=off)`,
    );
}

function problemsOf(value: string, settings: Record<string, unknown>): string[] {
  const { sources, errors } = sourcesFromSetting(value);
  return [...errors, ...storageProblems(sources, settings)];
}

/** Validates the SOURCES setting at boot, listing every problem in one message. */
export function IsSourcesSetting(): PropertyDecorator {
  return (target: object, propertyName: string | symbol) => {
    registerDecorator({
      name: 'isSourcesSetting',
      target: target.constructor,
      propertyName: String(propertyName),
      validator: {
        validate: (value: unknown, args?: ValidationArguments) =>
          typeof value === 'string' &&
          problemsOf(value, (args?.object ?? {}) as Record<string, unknown>).length === 0,
        defaultMessage: (args: ValidationArguments) =>
          typeof args.value === 'string'
            ? `SOURCES: ${problemsOf(args.value, args.object as Record<string, unknown>).join('; ')}`
            : 'SOURCES must be a JSON string',
      },
    });
  };
}
