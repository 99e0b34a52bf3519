import { Inject, Injectable } from '@nestjs/common';
import { ApiKeyResolver, constantTimeEqual, Principal } from '@app/auth';
import { PROVISIONER_SETTINGS, ProvisionerSettings } from '../config/provisioner.settings';

/** Keys come from settings: one write key, any number of read-only keys. */
@Injectable()
export class ProvisionerKeyResolver implements ApiKeyResolver {
  constructor(@Inject(PROVISIONER_SETTINGS) private readonly settings: ProvisionerSettings) {}

  resolve(apiKey: string): Promise<Principal | null> {
    const writeKey = this.settings.PROVISIONER_API_KEY;
    // Compare against every key (no early exit) so timing does not reveal which kind matched.
    const isWrite = writeKey !== undefined && constantTimeEqual(apiKey, writeKey);
    const isRead = this.settings.readApiKeys
      .map((key) => constantTimeEqual(apiKey, key))
      .some(Boolean);
    if (isWrite) return Promise.resolve({ kind: 'write', name: 'write', canWrite: true });
    if (isRead) return Promise.resolve({ kind: 'read', name: 'read', canWrite: false });
    return Promise.resolve(null);
  }
}
