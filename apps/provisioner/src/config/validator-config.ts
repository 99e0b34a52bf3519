/**
 * The `validators` of one SOURCES entry (any source type): programs run to the GDI validator
 * contract on a dataset's staged files before it is published (docs/provisioner.md,
 * "Validators"; docs/decisions/validators-before-publication.md).
 */
export interface ValidatorConfig {
  /** Names the validator in import records and logs. */
  name: string;
  /**
   * The program and its arguments, with placeholders replaced in each: `{input}` and `{output}`
   * (the directories standing for /mnt/input and /mnt/output), `{data}` (the staged files),
   * `{timeout_s}` and `{memory_mb}` (the limits, for a container run to apply).
   */
  command: string[];
  /**
   * True where `command` runs a container that mounts `{input}` on /mnt/input and `{data}` on
   * /mnt/input/data: input.json then names /mnt/input/data/<path>, and the container engine
   * applies the memory limit (`{memory_mb}`) instead of prlimit.
   */
  container: boolean;
  /** `files` (file content validation) or `paths` (file structure), as input.json lists them. */
  mode: 'files' | 'paths';
  /** Killed (with its process group) after this long: the import is refused. */
  timeout_ms: number;
  /** Its address space (prlimit --as), or the container's memory limit. */
  memory_mb: number;
  /** Passed as input.json's `config`. */
  config?: Record<string, unknown>;
}

export const DEFAULT_VALIDATOR_TIMEOUT_MS = 600_000;
export const DEFAULT_VALIDATOR_MEMORY_MB = 2048;
const VALIDATOR_NAME = /^[a-z][a-z0-9_-]{0,63}$/;
const KNOWN = ['name', 'command', 'container', 'mode', 'timeout_ms', 'memory_mb', 'config'];

function positiveInteger(
  value: unknown,
  fallback: number,
  max: number,
  errors: string[],
  where: string,
): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) {
    errors.push(`${where} must be an integer from 1 to ${max}`);
    return fallback;
  }
  return value;
}

function parseOne(
  raw: unknown,
  where: string,
  resolvePath: (p: string) => string,
  errors: string[],
): ValidatorConfig | null {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    errors.push(`${where} must be an object`);
    return null;
  }
  const entry = raw as Record<string, unknown>;
  for (const key of Object.keys(entry))
    if (!KNOWN.includes(key)) errors.push(`${where}.${key} is not a known setting`);
  const name = typeof entry.name === 'string' ? entry.name : '';
  if (!VALIDATOR_NAME.test(name)) errors.push(`${where}.name must match ${VALIDATOR_NAME.source}`);
  const command = entry.command;
  const commandOk =
    Array.isArray(command) &&
    command.length > 0 &&
    command.every((part) => typeof part === 'string' && part !== '');
  if (!commandOk) errors.push(`${where}.command must be a non-empty list of non-empty strings`);
  if (entry.container !== undefined && typeof entry.container !== 'boolean')
    errors.push(`${where}.container must be true or false`);
  if (entry.mode !== undefined && entry.mode !== 'files' && entry.mode !== 'paths')
    errors.push(`${where}.mode must be "files" or "paths"`);
  const config = entry.config;
  if (
    config !== undefined &&
    (typeof config !== 'object' || config === null || Array.isArray(config))
  )
    errors.push(`${where}.config must be an object`);
  const argv = commandOk ? (command as string[]).slice() : [];
  // A program named by a relative path (tools/validators/...) is the repository's (or image's).
  if (argv.length > 0 && argv[0].includes('/') && !argv[0].startsWith('/'))
    argv[0] = resolvePath(argv[0]);
  return {
    name,
    command: argv,
    container: entry.container === true,
    mode: entry.mode === 'paths' ? 'paths' : 'files',
    timeout_ms: positiveInteger(
      entry.timeout_ms,
      DEFAULT_VALIDATOR_TIMEOUT_MS,
      24 * 3_600_000,
      errors,
      `${where}.timeout_ms`,
    ),
    memory_mb: positiveInteger(
      entry.memory_mb,
      DEFAULT_VALIDATOR_MEMORY_MB,
      1024 * 1024,
      errors,
      `${where}.memory_mb`,
    ),
    ...(config !== undefined ? { config: config as Record<string, unknown> } : {}),
  };
}

/** Parses one source's `validators` (absent: none); problems are added to `errors`. */
export function parseValidators(
  raw: unknown,
  where: string,
  resolvePath: (p: string) => string,
  errors: string[],
): ValidatorConfig[] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) {
    errors.push(`${where}.validators must be a list`);
    return [];
  }
  const validators = raw
    .map((entry, i) => parseOne(entry, `${where}.validators[${i}]`, resolvePath, errors))
    .filter((v): v is ValidatorConfig => v !== null);
  const names = validators.map((v) => v.name);
  names
    .filter((n, i) => n !== '' && names.indexOf(n) !== i)
    .forEach((n) => errors.push(`${where}.validators: name "${n}" is used twice`));
  return validators;
}
