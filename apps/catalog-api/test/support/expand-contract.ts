import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The expand/contract rule of docs/operations.md ("Schema changes"), checked on what the
 * migrations added since the previous release really did: the schema before and after them
 * (from PostgreSQL's catalog) and every statement they sent.
 */

const ROOT = join(__dirname, '../../../..');

/** The release upgrades start from (deploy/upgrade-from-ref; UPGRADE_FROM_REF overrides it). */
export function previousRelease(): string {
  if (process.env.UPGRADE_FROM_REF) return process.env.UPGRADE_FROM_REF;
  const line = readFileSync(join(ROOT, 'deploy/upgrade-from-ref'), 'utf8')
    .split('\n')
    .find((l) => l.trim() !== '' && !l.startsWith('#'));
  if (!line) throw new Error('deploy/upgrade-from-ref names no release');
  return line.trim();
}

/** The migration class names the previous release lists, in order. */
export function migrationsOf(ref: string): string[] {
  const index = execFileSync(
    'git',
    ['-C', ROOT, 'show', `${ref}:apps/catalog-api/src/database/migrations/index.ts`],
    { encoding: 'utf8' },
  );
  const list = /export const catalogMigrations[^\n]*=\s*\[([^\]]*)\]/.exec(index);
  if (!list) throw new Error(`${ref}: no catalogMigrations list in migrations/index.ts`);
  return list[1].match(/[A-Za-z_]\w*/g) ?? [];
}

/**
 * Whether the previous release's code (its sources but the migrations) names `identifier` as a
 * word: a table or column it maps, queries or writes. A common word counts too, which errs on
 * the safe side.
 */
export function previousReleaseReads(ref: string, identifier: string): boolean {
  const grep = spawnSync(
    'git',
    [
      '-C',
      ROOT,
      'grep',
      '-q',
      '-w',
      '-F',
      '-e',
      identifier,
      ref,
      '--',
      'apps/catalog-api/src',
      ':(exclude)apps/catalog-api/src/database/migrations',
    ],
    { encoding: 'utf8' },
  );
  if (grep.status === 0) return true;
  if (grep.status === 1) return false;
  throw new Error(`git grep in ${ref} failed: ${grep.stderr}`);
}

export interface Column {
  table: string;
  column: string;
  type: string;
  nullable: boolean;
  hasDefault: boolean;
}

export interface Schema {
  tables: Set<string>;
  columns: Map<string, Column>;
}

/**
 * A column has a default when it declares one, or when a BEFORE INSERT row trigger of its table
 * assigns it (`NEW.<column> :=`, as the audit trail's chain does): an insert that leaves it out
 * still gets a value. (tgtype bits: 1 row, 2 before, 4 insert.)
 */
export const SCHEMA_QUERY = `SELECT c.table_name AS "table", c.column_name AS "column",
    c.data_type || coalesce('(' || c.character_maximum_length || ')', '') AS "type",
    c.is_nullable = 'YES' AS "nullable",
    c.column_default IS NOT NULL OR EXISTS (
      SELECT 1 FROM pg_trigger tg
        JOIN pg_class r ON r.oid = tg.tgrelid
        JOIN pg_namespace n ON n.oid = r.relnamespace
        JOIN pg_proc p ON p.oid = tg.tgfoid
       WHERE n.nspname = c.table_schema AND r.relname = c.table_name AND NOT tg.tgisinternal
         AND tg.tgtype & 7 = 7
         AND p.prosrc ~* ('NEW\\.' || c.column_name || '\\s*:=')
    ) AS "hasDefault"
  FROM information_schema.columns c
  JOIN information_schema.tables t USING (table_schema, table_name)
  WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE'`;

export function schemaOf(rows: Column[]): Schema {
  return {
    tables: new Set(rows.map((r) => r.table)),
    columns: new Map(rows.map((r) => [`${r.table}.${r.column}`, r])),
  };
}

/** Statements of one query string; function bodies ($$ … $$) are kept whole. */
function statementsOf(sql: string): string[] {
  const text = sql.replace(/--[^\n]*/g, ' ');
  const parts = text.includes('$$') ? [text] : text.split(';');
  return parts
    .map((part) => part.replace(/\s+/g, ' ').replace(/"/g, '').trim())
    .filter((part) => part !== '');
}

/** The clauses of an ALTER TABLE, split at the commas outside parentheses. */
function clausesOf(actions: string): string[] {
  const clauses: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < actions.length; i++) {
    if (actions[i] === '(') depth++;
    else if (actions[i] === ')') depth--;
    else if (actions[i] === ',' && depth === 0) {
      clauses.push(actions.slice(start, i).trim());
      start = i + 1;
    }
  }
  clauses.push(actions.slice(start).trim());
  return clauses;
}

const bare = (name: string) => name.split('.').pop()!;

/**
 * What in these statements locks a table the previous release uses for longer than a moment:
 * an index built without CONCURRENTLY, a constraint validated in the statement that adds it.
 */
export function lockingStatements(statements: string[], existing: Set<string>): string[] {
  const problems: string[] = [];
  for (const statement of statements.flatMap(statementsOf)) {
    const index =
      /^CREATE (UNIQUE )?INDEX (CONCURRENTLY )?(IF NOT EXISTS )?(\S+ )?ON (ONLY )?(\S+)/i.exec(
        statement,
      );
    if (index && !index[2] && existing.has(bare(index[6])))
      problems.push(`builds an index on ${bare(index[6])} without CONCURRENTLY: ${statement}`);
    const alter = /^ALTER TABLE (ONLY )?(IF EXISTS )?(\S+) (.*)$/i.exec(statement);
    if (!alter || !existing.has(bare(alter[3]))) continue;
    const table = bare(alter[3]);
    for (const clause of clausesOf(alter[4])) {
      const why =
        /^ADD CONSTRAINT \S+ (CHECK|FOREIGN KEY)\b/i.test(clause) && !/\bNOT VALID\b/i.test(clause)
          ? 'adds a constraint without NOT VALID (validate it in a statement of its own)'
          : /^ADD CONSTRAINT \S+ (UNIQUE|PRIMARY KEY)\b/i.test(clause) &&
              !/\bUSING INDEX\b/i.test(clause)
            ? 'adds a unique key without USING INDEX (build the index CONCURRENTLY first)'
            : /^ADD (COLUMN )?(IF NOT EXISTS )?\S+ .*\bREFERENCES\b/i.test(clause)
              ? 'adds a column with a foreign key, validated at once (add the key NOT VALID apart)'
              : /^ALTER (COLUMN )?\S+ (SET DATA )?TYPE\b/i.test(clause)
                ? "changes a column's type (a rewrite under an exclusive lock)"
                : undefined;
      if (why) problems.push(`${why} on ${table}: ${clause}`);
    }
  }
  return problems;
}

/**
 * What the schema after the migrations takes away from the previous release: a table or column
 * it reads gone (dropped or renamed) or of another type, or a new required column it would not
 * fill when it inserts.
 */
export function contractedSchema(
  before: Schema,
  after: Schema,
  reads: (identifier: string) => boolean,
): string[] {
  const problems: string[] = [];
  for (const table of before.tables)
    if (!after.tables.has(table) && reads(table))
      problems.push(`drops or renames table ${table}, which the previous release reads`);
  for (const [key, old] of before.columns) {
    if (!after.tables.has(old.table)) continue;
    const now = after.columns.get(key);
    if (!now) {
      if (reads(old.column))
        problems.push(`drops or renames column ${key}, which the previous release reads`);
    } else if (now.type !== old.type && reads(old.column)) {
      problems.push(
        `changes the type of ${key} (${old.type} -> ${now.type}), which the previous release reads`,
      );
    } else if (old.nullable && !now.nullable && !now.hasDefault) {
      problems.push(
        `makes ${key} required without a default: the previous release's inserts may leave it out`,
      );
    }
  }
  for (const [key, now] of after.columns)
    if (
      before.tables.has(now.table) &&
      !before.columns.has(key) &&
      !now.nullable &&
      !now.hasDefault
    )
      problems.push(
        `adds ${key} as required without a default: the previous release's inserts leave it out`,
      );
  return problems;
}
