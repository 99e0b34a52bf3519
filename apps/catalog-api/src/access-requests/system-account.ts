import type { SystemAccount } from '../users/users.repository';

/** The user recorded as creator of accesses granted through access requests. */
export const ACCESS_REQUEST_ACCOUNT: SystemAccount = {
  username: 'system::access-requests',
  firstName: ':Access requests:',
  lastName: ':System Account:',
};
