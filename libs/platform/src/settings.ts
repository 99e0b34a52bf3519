import { ClassConstructor, plainToInstance, Transform } from 'class-transformer';
import {
  IsBoolean,
  IsInt,
  Max,
  Min,
  validateSync,
  ValidationArguments,
  ValidationError,
  ValidateBy,
  ValidatorConstraint,
  ValidatorConstraintInterface,
} from 'class-validator';
import { IpAllowList } from '@app/auth';

/** Raised at boot when settings are missing or invalid; lists every problem, not just the first. */
export class SettingsError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid settings:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'SettingsError';
  }
}

function describe(errors: ValidationError[], prefix = ''): string[] {
  return errors.flatMap((error) => {
    const name = prefix + error.property;
    const own = Object.values(error.constraints ?? {}).map((message) =>
      message.startsWith(error.property) ? `${prefix}${message}` : `${name}: ${message}`,
    );
    return [...own, ...describe(error.children ?? [], `${name}.`)];
  });
}

/**
 * Turns the environment into a typed, validated settings object. Empty strings count as unset,
 * so `FOO=` in a compose file falls back to the default instead of failing a format check.
 */
export function loadSettings<T extends object>(
  schema: ClassConstructor<T>,
  env: NodeJS.ProcessEnv = process.env,
): T {
  const plain = Object.fromEntries(
    Object.entries(env).filter(([, value]) => value !== undefined && value !== ''),
  );
  const settings = plainToInstance(schema, plain, { exposeDefaultValues: true });
  const errors = validateSync(settings, { whitelist: false, forbidUnknownValues: false });
  if (errors.length > 0) throw new SettingsError(describe(errors));
  return settings;
}

/** Parses `true/false/1/0/yes/no` as the environment spells booleans. */
export function parseBoolean(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const v = value.trim().toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(v)) return true;
  if (['false', '0', 'no', 'off'].includes(v)) return false;
  return value;
}

/** Parses an integer setting, leaving anything else for the validator to reject by name. */
export function parseInteger(value: unknown): unknown {
  if (typeof value !== 'string' || !/^-?\d+$/.test(value.trim())) return value;
  return Number(value.trim());
}

type PropertyDecorator = (target: object, propertyKey: string | symbol) => void;

function all(...decorators: PropertyDecorator[]): PropertyDecorator {
  return (target, key) => decorators.forEach((decorate) => decorate(target, key));
}

/** An integer setting within [min, max], read from its environment string. */
export function IntegerSetting(min: number, max?: number): PropertyDecorator {
  const bounds = max === undefined ? [Min(min)] : [Min(min), Max(max)];
  return all(
    Transform(({ value }) => parseInteger(value)),
    IsInt(),
    // eslint-disable-next-line no-restricted-syntax -- one or two bounds
    ...bounds,
  );
}

/**
 * A base URL setting, normalised once as it is loaded: without a trailing slash, so every user
 * joins paths to it as they are (`${url}/api/...`).
 */
export function BaseUrlSetting(): PropertyDecorator {
  return Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' ? value.replace(/\/+$/, '') : value,
  );
}

/** A boolean setting, spelled true/false/1/0/yes/no/on/off in the environment. */
export function BooleanSetting(): PropertyDecorator {
  return all(
    Transform(({ value }) => parseBoolean(value)),
    IsBoolean(),
  );
}

/** A comma list of addresses and CIDR ranges, or `*`, as IpAllowList reads it. */
@ValidatorConstraint({ name: 'ipAllowList' })
export class IsIpAllowList implements ValidatorConstraintInterface {
  validate(value: unknown): boolean {
    if (typeof value !== 'string') return false;
    try {
      IpAllowList.parse(value);
      return true;
    } catch {
      return false;
    }
  }

  defaultMessage(args: ValidationArguments): string {
    return `${args.property} must be a comma list of IP addresses, CIDR ranges or *`;
  }
}

/**
 * Every placeholder in the repository's example files (.env.example, deploy/compose/example,
 * k8s/secrets) carries one of these words, and a secret setting holding one is refused at start:
 * copying an example never yields a working secret. test/example-secrets.spec.ts checks both
 * halves (each example value carries a marker; each service refuses it).
 */
const PLACEHOLDER_MARKERS = /example|change-?me|replace-?me|placeholder/i;

export function isPlaceholderSecret(value: string): boolean {
  return PLACEHOLDER_MARKERS.test(value);
}

/** The credential in a connection URL: its password (in the authority or a `password=` parameter). */
export function urlPassword(value: string): string {
  try {
    const url = new URL(value);
    return `${decodeURIComponent(url.password)} ${url.searchParams.get('password') ?? ''}`;
  } catch {
    return '';
  }
}

/**
 * A secret setting (a key, a client secret; with `secretOf`, the secret inside a value, e.g.
 * `urlPassword`): refused when it holds a placeholder of the example files, naming the setting.
 */
export function RealSecret(
  secretOf: (value: string) => string = (value) => value,
): PropertyDecorator {
  return ValidateBy({
    name: 'realSecret',
    validator: {
      validate: (value: unknown) =>
        typeof value !== 'string' || !isPlaceholderSecret(secretOf(value)),
      defaultMessage: (args?: ValidationArguments) =>
        `${args?.property ?? 'setting'} holds a placeholder of the example files ` +
        `(it contains "example", "change-me" or the like): set a real secret`,
    },
  });
}
