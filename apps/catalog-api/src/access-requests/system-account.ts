import type { EntityManager } from 'typeorm';

/** The user recorded as creator of accesses granted through access requests. */
export const ACCESS_REQUEST_ACCOUNT = {
  username: 'system::access-requests',
  firstName: ':Access requests:',
  lastName: ':System Account:',
} as const;

/**
 * The system account's id, creating it on first use. It is inactive: it cannot hold a key,
 * log in, or appear in the user picker.
 */
export async function accessRequestAccountId(manager: EntityManager): Promise<number> {
  const find = () =>
    manager.query<{ id: number }[]>('SELECT id FROM users WHERE username = $1', [
      ACCESS_REQUEST_ACCOUNT.username,
    ]);
  const found = await find();
  if (found.length > 0) return found[0].id;
  await manager.query(
    `INSERT INTO users (username, first_name, last_name, is_active) VALUES ($1, $2, $3, false)
     ON CONFLICT (username) DO NOTHING`,
    [
      ACCESS_REQUEST_ACCOUNT.username,
      ACCESS_REQUEST_ACCOUNT.firstName,
      ACCESS_REQUEST_ACCOUNT.lastName,
    ],
  );
  // A separate statement: under READ COMMITTED it sees a row a concurrent request just committed.
  const created = await find();
  return created[0].id;
}
