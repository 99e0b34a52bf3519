import type { MigrationInterface } from 'typeorm';
import { CreateTerms1795327223214 } from './1795327223214-CreateTerms';
import { CatalogSchema1795327371802 } from './1795327371802-CatalogSchema';
import { AuditLog1795327741625 } from './1795327741625-AuditLog';
import { AccessRequestKey1795330000000 } from './1795330000000-AccessRequestKey';
import { TermSearchLowerLabel1795331649836 } from './1795331649836-TermSearchLowerLabel';
import { NotifyCatalogVersion1795400000000 } from './1795400000000-NotifyCatalogVersion';
import { VersionedTerms1795400000001 } from './1795400000001-VersionedTerms';
import { AccessRequestRevocations1795400000002 } from './1795400000002-AccessRequestRevocations';
import { AuthFailures1795500000000 } from './1795500000000-AuthFailures';
import { BumpVersionOncePerTransaction1795500000001 } from './1795500000001-BumpVersionOncePerTransaction';
import { StorageRegistrations1795600000000 } from './1795600000000-StorageRegistrations';
import { StoredDatasetExports1795700000000 } from './1795700000000-StoredDatasetExports';
import { Ga4ghVisas1795800000000 } from './1795800000000-Ga4ghVisas';
import { StorageCopyBytesAndChecksum1795900000000 } from './1795900000000-StorageCopyBytesAndChecksum';
import { StorageLocationDigest1796000000000 } from './1796000000000-StorageLocationDigest';
import { StorageCopyDrsUri1796100000000 } from './1796100000000-StorageCopyDrsUri';
import { AuditTrailChain1796200000000 } from './1796200000000-AuditTrailChain';
import { AuditEventIdIndex1796200000001 } from './1796200000001-AuditEventIdIndex';
import { WebhookSubscriptions1796300000000 } from './1796300000000-WebhookSubscriptions';
import { DatasetVpDiscoverable1796450000000 } from './1796450000000-DatasetVpDiscoverable';
import { WebhookSubscriptionsNotify1796500000000 } from './1796500000000-WebhookSubscriptionsNotify';
import { ExposureReadIndexes1796600000000 } from './1796600000000-ExposureReadIndexes';

/**
 * Every migration, in order, listed explicitly (never globbed): a file cannot run by accident
 * and the compiled app needs no path scanning. Append new migrations at the end.
 */
export const catalogMigrations: (new () => MigrationInterface)[] = [
  CreateTerms1795327223214,
  CatalogSchema1795327371802,
  AuditLog1795327741625,
  AccessRequestKey1795330000000,
  TermSearchLowerLabel1795331649836,
  NotifyCatalogVersion1795400000000,
  VersionedTerms1795400000001,
  AccessRequestRevocations1795400000002,
  AuthFailures1795500000000,
  BumpVersionOncePerTransaction1795500000001,
  StorageRegistrations1795600000000,
  StoredDatasetExports1795700000000,
  Ga4ghVisas1795800000000,
  StorageCopyBytesAndChecksum1795900000000,
  StorageLocationDigest1796000000000,
  StorageCopyDrsUri1796100000000,
  AuditTrailChain1796200000000,
  AuditEventIdIndex1796200000001,
  WebhookSubscriptions1796300000000,
  DatasetVpDiscoverable1796450000000,
  WebhookSubscriptionsNotify1796500000000,
  ExposureReadIndexes1796600000000,
];
