import { AccessRequestRevocation } from './access-requests/access-request-revocation.entity';
import { Access } from './accesses/access.entity';
import { AuditCheckpoint } from './audit/audit-checkpoint.entity';
import { AuditEntry } from './audit/audit-entry.entity';
import { AuditHead } from './audit/audit-head.entity';
import { CatalogVersion } from './catalog-version/catalog-version.entity';
import { Cohort } from './cohorts/cohort.entity';
import { Contact } from './contacts/contact.entity';
import { ContractPartnerRole } from './contracts/contract-partner-role.entity';
import { Contract } from './contracts/contract.entity';
import { DataDeclaration } from './datasets/data-declaration.entity';
import { Dataset } from './datasets/dataset.entity';
import { LegalBasis } from './datasets/legal-basis.entity';
import { StorageLocation } from './datasets/storage-location.entity';
import { Transfer } from './datasets/transfer.entity';
import { UseCondition } from './datasets/use-condition.entity';
import { Endpoint } from './endpoints/endpoint.entity';
import { Exposure } from './endpoints/exposure.entity';
import { Partner } from './partners/partner.entity';
import { PermissionGrant } from './visibility/permission-grant.entity';
import { Project } from './projects/project.entity';
import { Publication } from './projects/publication.entity';
import { Term } from './terms/term.entity';
import { Group } from './users/group.entity';
import { WebhookDelivery } from './webhooks/webhook-delivery.entity';
import { WebhookSubscription } from './webhooks/webhook-subscription.entity';
import { User } from './users/user.entity';

/**
 * Every entity of the catalog schema, listed explicitly (never globbed) so the app, the
 * migration CLI and the tests all see exactly the same model. Append new entities here.
 */
export const catalogEntities: (new (...args: never[]) => object)[] = [
  Term,
  Partner,
  Contact,
  Group,
  User,
  Cohort,
  Project,
  Publication,
  Dataset,
  DataDeclaration,
  UseCondition,
  LegalBasis,
  StorageLocation,
  Transfer,
  Contract,
  ContractPartnerRole,
  Endpoint,
  Exposure,
  Access,
  AccessRequestRevocation,
  PermissionGrant,
  CatalogVersion,
  AuditEntry,
  AuditHead,
  AuditCheckpoint,
  WebhookSubscription,
  WebhookDelivery,
];
