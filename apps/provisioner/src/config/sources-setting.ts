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

/** Validates the SOURCES setting at boot, listing every problem in one message. */
export function IsSourcesSetting(): PropertyDecorator {
  return (target: object, propertyName: string | symbol) => {
    registerDecorator({
      name: 'isSourcesSetting',
      target: target.constructor,
      propertyName: String(propertyName),
      validator: {
        validate: (value: unknown) =>
          typeof value === 'string' && sourcesFromSetting(value).errors.length === 0,
        defaultMessage: (args: ValidationArguments) =>
          typeof args.value === 'string'
            ? `SOURCES: ${sourcesFromSetting(args.value).errors.join('; ')}`
            : 'SOURCES must be a JSON string',
      },
    });
  };
}
