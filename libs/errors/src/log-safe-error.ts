/**
 * What of a database error may reach a log line: where it happened (SQLSTATE, constraint,
 * table, column, the statement's text with its `$n` placeholders), never the values. TypeORM's
 * QueryFailedError carries the statement's `parameters` (e-mail addresses, key hashes…), and
 * the driver's `detail` and `where` quote the offending row (`Key (email)=(a@b.org) already
 * exists`); both are left out.
 */
const DATABASE_FIELDS = new Set([
  'name',
  'code',
  'severity',
  'constraint',
  'table',
  'column',
  'schema',
  'dataType',
  'routine',
  'query',
]);

/** Longest statement text kept in a log line (imports build statements of many rows). */
const MAX_QUERY_CHARS = 2000;
/** How deep `cause` chains are followed. */
const MAX_DEPTH = 5;

/**
 * A database error, as the pg driver raises it (`severity` and a five-character SQLSTATE) or
 * as TypeORM wraps it (`driverError`, `parameters`).
 */
export function isDatabaseError(error: object): boolean {
  const e = error as Record<string, unknown>;
  if ('driverError' in e || 'parameters' in e) return true;
  return (
    typeof e.severity === 'string' && typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code)
  );
}

/**
 * A database message with the value it quotes at its end removed: PostgreSQL writes
 * `invalid input syntax for type uuid: "…"` or `invalid input value for enum x: "…"`.
 */
export function scrubDatabaseMessage(message: string): string {
  return message.replace(/: ".*"$/s, ': "[value]"');
}

function serialize(error: unknown, depth: number): unknown {
  if (typeof error !== 'object' || error === null) return error;
  const e = error as Record<string, unknown>;
  const database = isDatabaseError(e);
  const message = typeof e.message === 'string' ? e.message : undefined;
  const shown = database && message !== undefined ? scrubDatabaseMessage(message) : message;
  const out: Record<string, unknown> = {
    type: (error as { constructor?: { name?: string } }).constructor?.name ?? 'Object',
  };
  if (shown !== undefined) out.message = shown;
  if (typeof e.stack === 'string')
    out.stack =
      message !== undefined && shown !== message ? e.stack.replace(message, shown!) : e.stack;
  for (const [key, value] of Object.entries(e)) {
    if (key in out || key === 'cause' || key === 'parameters') continue;
    if (database && !DATABASE_FIELDS.has(key)) continue;
    if (key === 'query' && typeof value === 'string') {
      out.query = value.length > MAX_QUERY_CHARS ? `${value.slice(0, MAX_QUERY_CHARS)}…` : value;
    } else if (typeof value === 'object' && value !== null && depth < MAX_DEPTH) {
      out[key] = Array.isArray(value)
        ? value.slice(0, 10).map((item) => serialize(item, depth + 1))
        : serialize(value, depth + 1);
    } else {
      out[key] = value;
    }
  }
  if (e.cause !== undefined && depth < MAX_DEPTH) out.cause = serialize(e.cause, depth + 1);
  return out;
}

/**
 * How an error appears in a log line (the logger's `err` serializer, and every error a process
 * prints): type, message, stack and its own fields, with database errors reduced to where they
 * happened (no SQL parameters, no quoted values), also inside `cause` chains and nested errors.
 */
export function logSafeError(error: unknown): unknown {
  return serialize(error, 0);
}

/** One line for a log message built by hand: the error's message, database values removed. */
export function logSafeMessage(error: unknown): string {
  if (typeof error !== 'object' || error === null) return String(error);
  const message = String((error as { message?: unknown }).message ?? error);
  return isDatabaseError(error) ? scrubDatabaseMessage(message) : message;
}
