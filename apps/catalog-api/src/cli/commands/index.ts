import type { CliCommand } from '../cli-command';
import { auditCrateCommand } from './audit-crate.command';
import {
  createEndpointCommand,
  exposeCommand,
  grantCommand,
  publishCommand,
  revokeCommand,
  unpublishCommand,
  vpDiscoverableCommand,
  withdrawCommand,
} from './catalog-admin.commands';
import { expireAccessesCommand } from './expire-accesses.command';
import { idpSyncCommand } from './idp-sync.command';
import { importCommand } from './import.command';
import { permissionsCommand } from './permissions.command';
import { subscriptionsCommand } from './subscriptions.command';
import { trailCommand } from './trail.command';
import { createUserCommand, rotateKeyCommand, updateUserCommand } from './users.commands';
import { auditCommand, loadVocabularyCommand } from './vocabulary-audit.commands';

/** Every command of `npm run catalog`, in the order `--help` lists them. Append new ones here. */
export const CLI_COMMANDS: CliCommand[] = [
  importCommand,
  createUserCommand,
  rotateKeyCommand,
  updateUserCommand,
  createEndpointCommand,
  exposeCommand,
  withdrawCommand,
  grantCommand,
  revokeCommand,
  publishCommand,
  unpublishCommand,
  loadVocabularyCommand,
  auditCommand,
  expireAccessesCommand,
  idpSyncCommand,
  trailCommand,
  subscriptionsCommand,
  permissionsCommand,
  vpDiscoverableCommand,
  auditCrateCommand,
];
