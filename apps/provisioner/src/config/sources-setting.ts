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
 * Validators read a dataset's staged files where they lie, as plain files on this host: with S3
 * storage or in archive mode (encrypted files) there are none to give them.
 */
function validatorStorageProblems(sources: SourceConfig[], settings: object): string[] {
  const { STORAGE_BACKEND, STORAGE_ENCRYPTION } = settings as {
    STORAGE_BACKEND?: string;
    STORAGE_ENCRYPTION?: string;
  };
  const local = (STORAGE_BACKEND ?? 'filesystem') === 'filesystem';
  const plain = (STORAGE_ENCRYPTION ?? 'off') === 'off';
  if (local && plain) return [];
  return sources
    .filter((source) => (source.validators ?? []).length > 0)
    .map(
      (source) =>
        `source "${source.name}" has validators, which need STORAGE_BACKEND=filesystem and STORAGE_ENCRYPTION=off`,
    );
}

function sourcesProblems(value: string, settings: object): string[] {
  const { sources, errors } = sourcesFromSetting(value);
  return [...errors, ...validatorStorageProblems(sources, settings)];
}

/** Validates the SOURCES setting at boot, listing every problem in one message. */
export function IsSourcesSetting(): PropertyDecorator {
  return (target: object, propertyName: string | symbol) => {
    registerDecorator({
      name: 'isSourcesSetting',
      target: target.constructor,
      propertyName: String(propertyName),
      validator: {
        validate: (value: unknown, args: ValidationArguments) =>
          typeof value === 'string' && sourcesProblems(value, args.object).length === 0,
        defaultMessage: (args: ValidationArguments) =>
          typeof args.value === 'string'
            ? `SOURCES: ${sourcesProblems(args.value, args.object).join('; ')}`
            : 'SOURCES must be a JSON string',
      },
    });
  };
}
