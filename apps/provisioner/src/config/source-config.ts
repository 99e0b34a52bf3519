/**
 * Shape of one entry of the SOURCES setting (a JSON list), its parsing, and the caps on what
 * sources are read with (SOURCE_*_MAX_*). Settings are the lowest layer: the adapters in
 * sources/ read these shapes, config/ imports nothing of theirs.
 */
import { parseValidators, type ValidatorConfig } from './validator-config';

/** Caps on what a depositor's metadata may make the provisioner read (settings). */
export interface SourceLimits {
  /** submission.json and dataset.json (SOURCE_METADATA_MAX_BYTES). */
  metadataMaxBytes: number;
  /** Each checksum manifest (SOURCE_MANIFEST_MAX_BYTES). */
  manifestMaxBytes: number;
  /** Datasets one submission.json may name (SOURCE_SUBMISSION_MAX_DATASETS). */
  submissionMaxDatasets: number;
}

export const DEFAULT_SOURCE_LIMITS: SourceLimits = {
  metadataMaxBytes: 1024 * 1024,
  manifestMaxBytes: 64 * 1024 * 1024,
  submissionMaxDatasets: 10_000,
};

export interface DropzoneSourceConfig {
  name: string;
  type: 'dropzone';
  root: string;
  importable_statuses: string[];
}

export interface DssSourceConfig {
  name: string;
  type: 'dss';
  url: string;
  api_key: string;
  landing_zone: string;
  importable_statuses: string[];
  /** Statuses asked for when listing; empty = the server's default set. */
  list_statuses: string[];
  timeout_ms: number;
}

/** What every source type may have besides its own settings. */
export interface SourceCommonConfig {
  /** Run on each dataset's staged files before it is published (validator-config.ts). */
  validators?: ValidatorConfig[];
}

export type SourceConfig = (DropzoneSourceConfig | DssSourceConfig) & SourceCommonConfig;

export const DEFAULT_IMPORTABLE_STATUSES = ['completed'];
const SOURCE_NAME = /^[a-z][a-z0-9_]{0,31}$/;
const DEFAULT_TIMEOUT_MS = 10_000;

type Raw = Record<string, unknown>;

function stringList(
  raw: Raw,
  key: string,
  fallback: string[],
  errors: string[],
  where: string,
): string[] {
  const value = raw[key];
  if (value === undefined) return fallback;
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string' && v !== '')) {
    errors.push(`${where}.${key} must be a list of non-empty strings`);
    return fallback;
  }
  return value as string[];
}

function requiredString(raw: Raw, key: string, errors: string[], where: string): string {
  const value = raw[key];
  if (typeof value !== 'string' || value === '') {
    errors.push(`${where}.${key} is required (a non-empty string)`);
    return '';
  }
  return value;
}

function parseOne(
  raw: unknown,
  index: number,
  resolvePath: (p: string) => string,
  errors: string[],
): SourceConfig | null {
  const where = `SOURCES[${index}]`;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    errors.push(`${where} must be an object`);
    return null;
  }
  const entry = raw as Raw;
  const name = requiredString(entry, 'name', errors, where);
  // Names never hold '-' so that job ids `<source>-<kind>-<id>` split unambiguously.
  if (name && !SOURCE_NAME.test(name))
    errors.push(`${where}.name must match ${SOURCE_NAME.source}`);
  const importable = stringList(
    entry,
    'importable_statuses',
    DEFAULT_IMPORTABLE_STATUSES,
    errors,
    where,
  );
  const known =
    entry.type === 'dropzone'
      ? ['name', 'type', 'root', 'importable_statuses']
      : [
          'name',
          'type',
          'url',
          'api_key',
          'landing_zone',
          'importable_statuses',
          'list_statuses',
          'timeout_ms',
        ];
  for (const key of Object.keys(entry))
    if (!known.includes(key)) errors.push(`${where}.${key} is not a known setting`);
  if (entry.type === 'dropzone') {
    const root = requiredString(entry, 'root', errors, where);
    return {
      name,
      type: 'dropzone',
      root: root && resolvePath(root),
      importable_statuses: importable,
    };
  }
  if (entry.type === 'dss') {
    const url = requiredString(entry, 'url', errors, where);
    if (url && !/^https?:\/\//.test(url)) errors.push(`${where}.url must be an http(s) URL`);
    const timeout = entry.timeout_ms ?? DEFAULT_TIMEOUT_MS;
    if (typeof timeout !== 'number' || !Number.isInteger(timeout) || timeout < 1)
      errors.push(`${where}.timeout_ms must be a positive integer`);
    return {
      name,
      type: 'dss',
      url: url.replace(/\/+$/, ''),
      api_key: requiredString(entry, 'api_key', errors, where),
      landing_zone: resolvePath(requiredString(entry, 'landing_zone', errors, where)),
      importable_statuses: importable,
      list_statuses: stringList(entry, 'list_statuses', [], errors, where),
      timeout_ms: typeof timeout === 'number' ? timeout : DEFAULT_TIMEOUT_MS,
    };
  }
  errors.push(`${where}.type must be "dropzone" or "dss"`);
  return null;
}

/**
 * One entry with the settings every type shares (`validators`) taken out before its type's own
 * are parsed, and put back on the result.
 */
function withValidators(
  raw: unknown,
  index: number,
  resolvePath: (p: string) => string,
  errors: string[],
): SourceConfig | null {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw) || !('validators' in raw))
    return parseOne(raw, index, resolvePath, errors);
  const { validators, ...rest } = raw as Raw;
  const parsed = parseOne(rest, index, resolvePath, errors);
  if (parsed === null) return null;
  return {
    ...parsed,
    validators: parseValidators(validators, `SOURCES[${index}]`, resolvePath, errors),
  };
}

/**
 * Parses SOURCES. Relative paths resolve against the repository root (resolvePath).
 * Returns every problem at once so a bad setting stops the app with the full list.
 */
export function parseSources(
  json: string | undefined,
  defaultDropzoneRoot: string,
  resolvePath: (p: string) => string,
): { sources: SourceConfig[]; errors: string[] } {
  if (json === undefined || json.trim() === '') {
    return {
      sources: [
        {
          name: 'dropzone',
          type: 'dropzone',
          root: defaultDropzoneRoot,
          importable_statuses: DEFAULT_IMPORTABLE_STATUSES,
        },
      ],
      errors: [],
    };
  }
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch {
    return { sources: [], errors: ['SOURCES must be valid JSON (a list of {name, type, ...})'] };
  }
  if (!Array.isArray(raw)) return { sources: [], errors: ['SOURCES must be a JSON list'] };
  const errors: string[] = [];
  const sources = raw
    .map((entry, i) => withValidators(entry, i, resolvePath, errors))
    .filter((s): s is SourceConfig => s !== null);
  const names = sources.map((s) => s.name);
  names
    .filter((n, i) => names.indexOf(n) !== i)
    .forEach((n) => errors.push(`SOURCES: name "${n}" is used twice`));
  return { sources, errors };
}
