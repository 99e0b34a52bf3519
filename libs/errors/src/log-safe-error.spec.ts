import { DatabaseError } from 'pg';
import { QueryFailedError } from 'typeorm';
import { fromDatabaseConflict } from './database-input-errors';
import { logSafeError, logSafeMessage } from './log-safe-error';

const EMAIL = 'race@example.org';
const KEY_HASH = 'f'.repeat(64);

/** A driver error as pg builds it from the server's ErrorResponse (its fields set one by one). */
function driverError(message: string, fields: Partial<DatabaseError>): DatabaseError {
  return Object.assign(new DatabaseError(message, 100, 'error'), { severity: 'ERROR', ...fields });
}

/** What TypeORM throws for it: the driver's fields copied, the statement and its parameters. */
function queryFailed(driver: DatabaseError): QueryFailedError {
  return new QueryFailedError(
    'INSERT INTO "users"("username", "email", "api_key_hash") VALUES ($1, $2, $3)',
    ['race', EMAIL, KEY_HASH],
    driver,
  );
}

const uniqueViolation = () =>
  driverError('duplicate key value violates unique constraint "UQ_users_username"', {
    code: '23505',
    detail: `Key (username)=(race) already exists.`,
    constraint: 'UQ_users_username',
    table: 'users',
    schema: 'public',
  });

describe('logSafeError', () => {
  it('keeps where a failed statement failed and leaves out its parameters and the row it quotes', () => {
    const logged = JSON.stringify(logSafeError(queryFailed(uniqueViolation())));
    for (const value of [EMAIL, KEY_HASH, '(race)', 'parameters', 'driverError'])
      expect(logged).not.toContain(value);
    expect(JSON.parse(logged)).toMatchObject({
      type: 'QueryFailedError',
      message: 'duplicate key value violates unique constraint "UQ_users_username"',
      code: '23505',
      constraint: 'UQ_users_username',
      table: 'users',
      query: expect.stringContaining('VALUES ($1, $2, $3)'),
      stack: expect.stringContaining('QueryFailedError'),
    });
  });

  it('removes the value a message quotes, from the stack too', () => {
    const error = queryFailed(
      driverError(`invalid input syntax for type uuid: "${KEY_HASH}"`, { code: '22P02' }),
    );
    const logged = logSafeError(error) as { message: string; stack: string };
    expect(logged.message).toBe('invalid input syntax for type uuid: "[value]"');
    expect(logged.stack).not.toContain(KEY_HASH);
    expect(logSafeMessage(error)).toBe(logged.message);
  });

  it('scrubs database errors wherever they hide: the raw driver error, causes, nested fields', () => {
    const raw = uniqueViolation();
    const wrapped = new Error('import failed', { cause: queryFailed(uniqueViolation()) });
    const holder = Object.assign(new Error('job failed'), {
      inner: queryFailed(uniqueViolation()),
    });
    for (const error of [raw, wrapped, holder]) {
      const logged = JSON.stringify(logSafeError(error));
      expect(logged).not.toContain(EMAIL);
      expect(logged).not.toContain(KEY_HASH);
      expect(logged).not.toContain('already exists');
      expect(logged).toContain('UQ_users_username');
    }
  });

  it('leaves other errors and values as they are', () => {
    const error = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), {
      code: 'ECONNREFUSED',
      port: 5432,
    });
    expect(logSafeError(error)).toEqual({
      type: 'Error',
      message: 'connect ECONNREFUSED 127.0.0.1:5432',
      stack: error.stack,
      code: 'ECONNREFUSED',
      port: 5432,
    });
    expect(logSafeError('a thrown string')).toBe('a thrown string');
  });
});

describe('fromDatabaseConflict', () => {
  it('answers a unique violation with 409 naming the column, never its value', () => {
    const conflict = fromDatabaseConflict(queryFailed(uniqueViolation()));
    expect(conflict?.status).toBe(409);
    expect(conflict?.toEnvelope()).toEqual({
      status: 'Error',
      description:
        'Conflicts with an existing record (a concurrent change, or a value already taken)',
      more: { field: 'username' },
    });
    const pair = driverError('duplicate key value', {
      code: '23505',
      detail: 'Key (dataset_id, endpoint_id)=(1, 2) already exists.',
    });
    expect(fromDatabaseConflict(pair)?.more).toEqual({ fields: ['dataset_id', 'endpoint_id'] });
  });

  it('answers deadlocks and serialization failures with 409, and nothing else', () => {
    for (const code of ['40001', '40P01'])
      expect(fromDatabaseConflict(driverError('x', { code }))?.status).toBe(409);
    for (const code of ['22001', '23503', '57P01'])
      expect(fromDatabaseConflict(driverError('x', { code }))).toBeUndefined();
    expect(fromDatabaseConflict(new Error('plain'))).toBeUndefined();
  });
});
