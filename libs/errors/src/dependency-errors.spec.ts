import { runInNewContext } from 'node:vm';
import { isDependencyUnavailable } from './dependency-errors';

const withCode = (code: string, message = 'failed') => Object.assign(new Error(message), { code });

describe('isDependencyUnavailable', () => {
  it.each([
    'ECONNREFUSED',
    'ECONNRESET',
    'ETIMEDOUT',
    'ENOTFOUND',
    '57P01',
    '57P03',
    '08006',
    '25006',
  ])('is true for the connection code %s', (code) => {
    expect(isDependencyUnavailable(withCode(code))).toBe(true);
  });

  it.each([
    'Connection terminated unexpectedly',
    'Connection terminated due to connection timeout',
    'timeout exceeded when trying to connect',
    'the database system is starting up',
    'the database system is shutting down',
    'the database system is in recovery mode',
    // PgBouncer (src/server.c, src/client.c; src/objects.c check_fast_fail, whose message was
    // "pgbouncer cannot connect to server" before 1.17), SQLSTATE 08P01
    'server conn crashed?',
    'pgbouncer cannot connect to server',
    'server login has been failing, try again later (server_login_retry)',
    // src/server.c handle_server_work: the SET of the client's parameters answered with an error
    // (the backend ended by a switchover), the client ended with this.
    'invalid server parameter',
    'query_wait_timeout',
    'Connection is closed.',
    "Stream isn't writeable and enableOfflineQueue options is false",
    'Reached the max retries per request limit (which is 1). Refer to "maxRetriesPerRequest" option for details.',
    'All sentinels are unreachable. Retrying from scratch after 10ms.',
    'Failed to refresh slots cache.',
    'CLUSTERDOWN The cluster is down',
    "READONLY You can't write against a read only replica.",
    'NOREPLICAS Not enough good replicas to write.',
    'LOADING Redis is loading the dataset in memory',
    'MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to no.',
  ])('is true for the message "%s"', (message) => {
    expect(isDependencyUnavailable(new Error(message))).toBe(true);
  });

  it('looks through the cause chain', () => {
    const wrapped = new Error('query failed', {
      cause: new Error('x', { cause: withCode('ECONNREFUSED') }),
    });
    expect(isDependencyUnavailable(wrapped)).toBe(true);
  });

  it('recognises errors made in another realm (Node core errors seen from a VM context)', () => {
    const foreign = runInNewContext(
      "Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })",
    ) as unknown;
    expect(foreign instanceof Error).toBe(false);
    expect(isDependencyUnavailable(foreign)).toBe(true);
  });

  it('is false for bugs and client problems', () => {
    expect(isDependencyUnavailable(new Error('relation "x" does not exist'))).toBe(false);
    expect(isDependencyUnavailable(withCode('23505', 'duplicate key value'))).toBe(false);
    expect(isDependencyUnavailable(withCode('ENOENT'))).toBe(false);
    // A protocol violation PostgreSQL itself reports is a bug, not an outage.
    expect(isDependencyUnavailable(withCode('08P01', 'invalid frontend message type 0'))).toBe(
      false,
    );
    expect(isDependencyUnavailable(new TypeError('x is undefined'))).toBe(false);
  });

  it('is false for values that are not errors', () => {
    expect(isDependencyUnavailable('ECONNREFUSED')).toBe(false);
    expect(
      isDependencyUnavailable({ code: 'ECONNREFUSED', message: 'Connection terminated' }),
    ).toBe(false);
    expect(isDependencyUnavailable(undefined)).toBe(false);
    expect(isDependencyUnavailable(null)).toBe(false);
  });

  it('does not loop on an error that is its own cause', () => {
    const selfish = new Error('odd');
    (selfish as { cause?: unknown }).cause = selfish;
    expect(isDependencyUnavailable(selfish)).toBe(false);
  });
});
