import { Client } from 'pg';

/** Runs `work` on a fresh connection to `url`, always closed afterwards. */
export async function withClient<T>(url: string, work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  // A session the server ends between statements (a failover, a restart) fails the next statement;
  // unheard, its `error` event would end the process.
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Whether a query on `url` succeeds within `timeoutMs` (a server starting, a URL to check). */
export async function postgresAnswersAt(url: string, timeoutMs = 1500): Promise<boolean> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: timeoutMs });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}
