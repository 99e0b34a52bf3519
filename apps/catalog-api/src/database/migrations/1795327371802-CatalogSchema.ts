import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The catalog schema (generated, then reviewed). Added by hand: the accession sequence, the
 * one-row data version and the statement triggers that bump it on every catalog write.
 */
/** Every table whose content shows in a cached response: a write to any of them bumps the version. */
const CATALOG_DATA_TABLES = [
  'partners',
  'contacts',
  'contact_partners',
  'groups',
  'users',
  'user_groups',
  'cohorts',
  'cohort_owners',
  'cohort_institutes',
  'projects',
  'project_local_custodians',
  'project_company_personnel',
  'project_contacts',
  'project_terms',
  'publications',
  'datasets',
  'dataset_local_custodians',
  'data_declarations',
  'data_declaration_cohorts',
  'use_conditions',
  'legal_bases',
  'legal_basis_data_declarations',
  'storage_locations',
  'transfers',
  'contracts',
  'contract_local_custodians',
  'contract_partner_roles',
  'contract_partner_role_contacts',
  'endpoints',
  'exposures',
  'accesses',
  'access_storage_locations',
  'permission_grants',
];

export class CatalogSchema1795327371802 implements MigrationInterface {
  name = 'CatalogSchema1795327371802';

  public async up(queryRunner: QueryRunner): Promise<void> {
    // Accessions ELU_I_<n>, shared by every tracked table, starting where the reference did.
    await queryRunner.query(`CREATE SEQUENCE "elu_accession_seq" START 100`);
    await queryRunner.query(
      `CREATE TYPE "public"."geo_category" AS ENUM('EU', 'Non_EU', 'International', 'National')`,
    );
    await queryRunner.query(
      `CREATE TYPE "public"."sector_category" AS ENUM('PUBLIC', 'PRIVATE_NP', 'PRIVATE_P')`,
    );
    await queryRunner.query(
      `CREATE TABLE "partners" ("id" SERIAL NOT NULL, "elu_accession" character varying(20) DEFAULT 'ELU_I_' || nextval('elu_accession_seq'), "metadata" text NOT NULL DEFAULT '{}', "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "name" character varying(255) NOT NULL, "acronym" character varying(255), "address" text, "country_code" character(2), "geo_category" "public"."geo_category", "sector_category" "public"."sector_category", "is_clinical" boolean NOT NULL DEFAULT false, "is_published" boolean NOT NULL DEFAULT false, CONSTRAINT "UQ_87ad337a286a156a415f088fd4c" UNIQUE ("elu_accession"), CONSTRAINT "UQ_b8d14f1ff3b804b1c020dd99ca8" UNIQUE ("name"), CONSTRAINT "CHK_partners_country_code" CHECK ("country_code" ~ '^[A-Z]{2}$'), CONSTRAINT "PK_998645b20820e4ab99aeae03b41" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE TYPE "public"."contact_type" AS ENUM('Researcher', 'Principal_Investigator', 'Data_Protection_Officer', 'Data_Manager', 'Legal_Representative', 'Other')`,
    );
    await queryRunner.query(
      `CREATE TABLE "contacts" ("id" SERIAL NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "first_name" character varying(150) NOT NULL, "last_name" character varying(150) NOT NULL, "email" character varying(254), "address" text, "phone" character varying(50), "oidc_id" character varying(64), "type" "public"."contact_type" NOT NULL DEFAULT 'Other', CONSTRAINT "UQ_c89e39b092a0659407291197fec" UNIQUE ("oidc_id"), CONSTRAINT "PK_b99cd40cfd66a99f1571f4f72e6" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE TABLE "groups" ("id" SERIAL NOT NULL, "name" character varying(150) NOT NULL, CONSTRAINT "UQ_664ea405ae2a10c264d582ee563" UNIQUE ("name"), CONSTRAINT "PK_659d1483316afb28afd3a90646e" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE TABLE "users" ("id" SERIAL NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "username" character varying(150) NOT NULL, "first_name" character varying(150) NOT NULL DEFAULT '', "last_name" character varying(150) NOT NULL DEFAULT '', "email" character varying(254), "oidc_id" character varying(64), "is_active" boolean NOT NULL DEFAULT true, "api_key_hash" character(64), "affiliation_id" integer, CONSTRAINT "UQ_fe0bb3f6520ee0469504521e710" UNIQUE ("username"), CONSTRAINT "UQ_d154dfd9d4c903fe5d52c6a4e12" UNIQUE ("oidc_id"), CONSTRAINT "UQ_249dd0446292ecf28e3d1e7cc4c" UNIQUE ("api_key_hash"), CONSTRAINT "PK_a3ffb1c0c8416b9fc6f907b7433" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE TABLE "publications" ("id" SERIAL NOT NULL, "citation" text NOT NULL, "doi" character varying(255), "project_id" integer, CONSTRAINT "PK_2c4e732b044e09139d2f1065fae" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_publications_project" ON "publications"  ("project_id") `,
    );
    await queryRunner.query(
      `CREATE TABLE "projects" ("id" SERIAL NOT NULL, "elu_accession" character varying(20) DEFAULT 'ELU_I_' || nextval('elu_accession_seq'), "metadata" text NOT NULL DEFAULT '{}', "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "acronym" character varying(200) NOT NULL, "title" character varying(500) NOT NULL, "description" text, "comments" text, "has_institutional_ethics_approval" boolean NOT NULL DEFAULT false, "institutional_ethics_approval_notes" text, "has_national_ethics_approval" boolean NOT NULL DEFAULT false, "national_ethics_approval_notes" text, "start_date" date, "end_date" date, "web_page" text, CONSTRAINT "UQ_6d28e04620d4fcaaf5f364c463d" UNIQUE ("elu_accession"), CONSTRAINT "UQ_b119392e28862b5fe561ae958b5" UNIQUE ("acronym"), CONSTRAINT "UQ_2117ba29bd245f2b53c42f429c9" UNIQUE ("title"), CONSTRAINT "PK_6271df0a7aed1d6c0691ce6ac50" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE TABLE "cohorts" ("id" SERIAL NOT NULL, "elu_accession" character varying(20) DEFAULT 'ELU_I_' || nextval('elu_accession_seq'), "metadata" text NOT NULL DEFAULT '{}', "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "name" character varying(255) NOT NULL, "description" text, "url" text, "has_ethics_approval" boolean NOT NULL DEFAULT true, "ethics_approval_notes" text, "is_published" boolean NOT NULL DEFAULT false, CONSTRAINT "UQ_1b8949c6acd380c7ea760f0ebd3" UNIQUE ("elu_accession"), CONSTRAINT "UQ_d1865366170f468d8eb720f8c8f" UNIQUE ("name"), CONSTRAINT "PK_fd38f76b135e907b834fda1e752" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE TYPE "public"."gdpr_role" AS ENUM('controller', 'joint_controller', 'processor')`,
    );
    await queryRunner.query(
      `CREATE TABLE "contract_partner_roles" ("id" SERIAL NOT NULL, "gdpr_roles" "public"."gdpr_role" array NOT NULL DEFAULT '{}', "comments" text, "contract_id" integer NOT NULL, "partner_id" integer NOT NULL, CONSTRAINT "UQ_contract_partner_roles_contract_partner" UNIQUE ("contract_id", "partner_id"), CONSTRAINT "PK_a91661e4c3e821dbd12b9a2a0f5" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE TABLE "contracts" ("id" SERIAL NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "name" character varying(255), "comments" text, "project_id" integer, CONSTRAINT "PK_2c7b8f3a7b1acdd49497d83d0fb" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE INDEX "IDX_contracts_project" ON "contracts"  ("project_id") `);
    await queryRunner.query(
      `CREATE TYPE "public"."use_class" AS ENUM('NRES', 'GRU', 'HMB', 'DS', 'POA', 'RS', 'RUO', 'NMDS', 'GSO', 'NPU', 'PUB', 'COL', 'RTN', 'IRB', 'GS', 'MOR', 'TS', 'US', 'PS', 'IS', 'IP', 'Other')`,
    );
    await queryRunner.query(
      `CREATE TYPE "public"."use_condition_rule" AS ENUM('PROHIBITION', 'OBLIGATION', 'PERMISSION', 'CONSTRAINED_PERMISSION')`,
    );
    await queryRunner.query(
      `CREATE TABLE "use_conditions" ("id" SERIAL NOT NULL, "use_class" "public"."use_class" NOT NULL, "use_class_note" text, "use_condition_note" text, "use_condition_rule" "public"."use_condition_rule" NOT NULL DEFAULT 'PROHIBITION', "data_declaration_id" integer NOT NULL, CONSTRAINT "PK_49df6f16cf904921935d651c95c" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_use_conditions_declaration" ON "use_conditions"  ("data_declaration_id") `,
    );
    await queryRunner.query(
      `CREATE TYPE "public"."access_category" AS ENUM('open_access', 'registered_access', 'controlled_access')`,
    );
    await queryRunner.query(
      `CREATE TYPE "public"."subjects_category" AS ENUM('unknown', 'cases', 'controls', 'cases_and_controls')`,
    );
    await queryRunner.query(
      `CREATE TYPE "public"."de_identification_method" AS ENUM('anonymization', 'pseudonymization')`,
    );
    await queryRunner.query(
      `CREATE TYPE "public"."consent_status" AS ENUM('heterogeneous', 'homogeneous')`,
    );
    await queryRunner.query(
      `CREATE TABLE "data_declarations" ("id" SERIAL NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "title" character varying(255) NOT NULL, "data_types" text array NOT NULL DEFAULT '{}', "data_types_notes" text, "access_category" "public"."access_category", "access_procedure" text, "subjects_category" "public"."subjects_category" NOT NULL DEFAULT 'cases_and_controls', "de_identification" "public"."de_identification_method" NOT NULL DEFAULT 'pseudonymization', "consent_status" "public"."consent_status", "has_special_subjects" boolean, "special_subjects_description" text, "embargo_date" date, "storage_end_date" date, "storage_duration_criteria" text, "dataset_id" integer NOT NULL, "partner_id" integer, "contract_id" integer, CONSTRAINT "UQ_data_declarations_dataset_title" UNIQUE ("dataset_id", "title"), CONSTRAINT "PK_c5e22ceeccb7e8e25dbb83399b8" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE TABLE "datasets" ("id" SERIAL NOT NULL, "elu_accession" character varying(20) DEFAULT 'ELU_I_' || nextval('elu_accession_seq'), "metadata" text NOT NULL DEFAULT '{}', "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "title" character varying(255) NOT NULL, "description" text, "elu_uuid" uuid NOT NULL DEFAULT gen_random_uuid(), "other_external_id" character varying(255), "project_id" integer, CONSTRAINT "UQ_77889baa30e5b07daf778180b47" UNIQUE ("elu_accession"), CONSTRAINT "UQ_ba59c2a65f89fb7f7e58a552aa8" UNIQUE ("title"), CONSTRAINT "UQ_01f4c8a0bb4e51e2219c8d53643" UNIQUE ("elu_uuid"), CONSTRAINT "PK_1bf831e43c559a240303e23d038" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE INDEX "IDX_datasets_project" ON "datasets"  ("project_id") `);
    await queryRunner.query(
      `CREATE TYPE "public"."storage_category" AS ENUM('master', 'backup', 'copy')`,
    );
    await queryRunner.query(
      `CREATE TABLE "storage_locations" ("id" SERIAL NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "platform" character varying(255) NOT NULL, "category" "public"."storage_category" NOT NULL DEFAULT 'master', "location" text, "dataset_id" integer NOT NULL, CONSTRAINT "PK_1f8980d88f9ebaba668dddd27cc" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_storage_locations_dataset" ON "storage_locations"  ("dataset_id") `,
    );
    await queryRunner.query(
      `CREATE TYPE "public"."access_status" AS ENUM('precreated', 'active', 'suspended', 'terminated')`,
    );
    await queryRunner.query(
      `CREATE TABLE "accesses" ("id" SERIAL NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "status" "public"."access_status" NOT NULL DEFAULT 'precreated', "granted_on" date, "grant_expires_on" date, "access_notes" text NOT NULL DEFAULT '', "was_generated_automatically" boolean NOT NULL DEFAULT false, "application_id" integer, "application_external_id" character varying(200), "dataset_id" integer NOT NULL, "user_id" integer, "contact_id" integer, "project_id" integer, "created_by_id" integer, CONSTRAINT "CHK_accesses_one_holder" CHECK ("user_id" IS NULL OR "contact_id" IS NULL), CONSTRAINT "PK_576fd8c1c291f0fedd0732b0295" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE INDEX "IDX_accesses_contact" ON "accesses"  ("contact_id") `);
    await queryRunner.query(`CREATE INDEX "IDX_accesses_user" ON "accesses"  ("user_id") `);
    await queryRunner.query(`CREATE INDEX "IDX_accesses_dataset" ON "accesses"  ("dataset_id") `);
    await queryRunner.query(
      `CREATE TABLE "catalog_version" ("id" smallint NOT NULL DEFAULT '1', "version" bigint NOT NULL DEFAULT '1', CONSTRAINT "CHK_catalog_version_single_row" CHECK ("id" = 1), CONSTRAINT "PK_cf6a6b67bfbe27014f0eb4214d8" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE TYPE "public"."legal_basis_code" AS ENUM('6.1(a)', '6.1(b)', '6.1(c)', '6.1(d)', '6.1(e)', '6.1(f)')`,
    );
    await queryRunner.query(
      `CREATE TYPE "public"."personal_data_code" AS ENUM('Standard', 'Special', 'Race', 'Genetic', 'Biometric', 'Health', 'Sexual orientation', 'Convictions', 'Other')`,
    );
    await queryRunner.query(
      `CREATE TABLE "legal_bases" ("id" SERIAL NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "legal_basis_codes" "public"."legal_basis_code" array NOT NULL DEFAULT '{}', "personal_data_codes" "public"."personal_data_code" array NOT NULL DEFAULT '{}', "legal_basis_notes" text, "dataset_id" integer NOT NULL, CONSTRAINT "PK_985d9a2bda8008e0f72b598003d" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_legal_bases_dataset" ON "legal_bases"  ("dataset_id") `,
    );
    await queryRunner.query(
      `CREATE TABLE "transfers" ("id" SERIAL NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "transfer_details" text, "transfer_date" date, "dataset_id" integer NOT NULL, "partner_id" integer, CONSTRAINT "PK_f712e908b465e0085b4408cabc3" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE INDEX "IDX_transfers_dataset" ON "transfers"  ("dataset_id") `);
    await queryRunner.query(
      `CREATE TABLE "endpoints" ("id" SERIAL NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "name" character varying(150) NOT NULL, "url_pattern" text NOT NULL, "api_key_hash" character(64) NOT NULL, CONSTRAINT "UQ_537a42187cc0ec69401f45889f7" UNIQUE ("name"), CONSTRAINT "UQ_69a78c095dcda82454ee41209d7" UNIQUE ("api_key_hash"), CONSTRAINT "PK_70835610dfa54ad5d990e02f70a" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE TABLE "exposures" ("id" SERIAL NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "form_id" integer NOT NULL, "form_name" character varying(255), "request_pdf_enabled" boolean NOT NULL DEFAULT false, "deprecated_at" TIMESTAMP WITH TIME ZONE, "deprecation_reason" text, "dataset_id" integer NOT NULL, "endpoint_id" integer NOT NULL, "created_by_id" integer, CONSTRAINT "PK_eac8f31265a22dca97b1304850f" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_exposures_endpoint" ON "exposures"  ("endpoint_id") `,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "UQ_exposures_active_dataset_endpoint" ON "exposures"  ("dataset_id", "endpoint_id") WHERE "deprecated_at" IS NULL`,
    );
    await queryRunner.query(`CREATE TYPE "public"."grantable_permission" AS ENUM('protected')`);
    await queryRunner.query(
      `CREATE TYPE "public"."grant_object_type" AS ENUM('dataset', 'project', 'contract')`,
    );
    await queryRunner.query(
      `CREATE TABLE "permission_grants" ("id" SERIAL NOT NULL, "permission" "public"."grantable_permission" NOT NULL DEFAULT 'protected', "object_type" "public"."grant_object_type" NOT NULL, "object_id" integer NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "user_id" integer, "group_id" integer, CONSTRAINT "CHK_permission_grants_one_holder" CHECK (("user_id" IS NULL) <> ("group_id" IS NULL)), CONSTRAINT "PK_be6ee1d795d0ac9f29a4e27a000" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_permission_grants_object" ON "permission_grants"  ("object_type", "object_id") `,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "UQ_permission_grants_group" ON "permission_grants"  ("group_id", "permission", "object_type", "object_id") WHERE "group_id" IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "UQ_permission_grants_user" ON "permission_grants"  ("user_id", "permission", "object_type", "object_id") WHERE "user_id" IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE TABLE "contact_partners" ("contact_id" integer NOT NULL, "partner_id" integer NOT NULL, CONSTRAINT "PK_8ea7383ded599ebc204f96c9fb7" PRIMARY KEY ("contact_id", "partner_id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_d61e6a5896c4b8b34d98d3ac0f" ON "contact_partners"  ("contact_id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_8e9830dd1dad17cce8cf9b9de5" ON "contact_partners"  ("partner_id") `,
    );
    await queryRunner.query(
      `CREATE TABLE "user_groups" ("user_id" integer NOT NULL, "group_id" integer NOT NULL, CONSTRAINT "PK_c95039f66f5d7a452fc53945bfe" PRIMARY KEY ("user_id", "group_id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_95bf94c61795df25a515435010" ON "user_groups"  ("user_id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_4c5f2c23c34f3921fbad2cd394" ON "user_groups"  ("group_id") `,
    );
    await queryRunner.query(
      `CREATE TABLE "project_local_custodians" ("project_id" integer NOT NULL, "user_id" integer NOT NULL, CONSTRAINT "PK_784b8bf5b96aad0160f38c20301" PRIMARY KEY ("project_id", "user_id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_2d72a9b7abcbc163da94e5534a" ON "project_local_custodians"  ("project_id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_28d65f8299b26eb63bfd04e356" ON "project_local_custodians"  ("user_id") `,
    );
    await queryRunner.query(
      `CREATE TABLE "project_company_personnel" ("project_id" integer NOT NULL, "user_id" integer NOT NULL, CONSTRAINT "PK_55538d59c1ac35dcab60f7e30b3" PRIMARY KEY ("project_id", "user_id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_a61d0ed531a66e10479c39ef19" ON "project_company_personnel"  ("project_id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_550409b619e02840d369cc9796" ON "project_company_personnel"  ("user_id") `,
    );
    await queryRunner.query(
      `CREATE TABLE "project_contacts" ("project_id" integer NOT NULL, "contact_id" integer NOT NULL, CONSTRAINT "PK_58238e696329efe547e1f5a4fa4" PRIMARY KEY ("project_id", "contact_id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_886c92d61d3cfe53327d003afa" ON "project_contacts"  ("project_id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_741d1391a06d17417b07f6ce87" ON "project_contacts"  ("contact_id") `,
    );
    await queryRunner.query(
      `CREATE TABLE "project_terms" ("project_id" integer NOT NULL, "term_id" integer NOT NULL, CONSTRAINT "PK_8e7198c73abc89b9c5ef14cff02" PRIMARY KEY ("project_id", "term_id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_4c211e2fb5b90d2e7d22e857ea" ON "project_terms"  ("project_id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_b98a866038c0624917e27f0553" ON "project_terms"  ("term_id") `,
    );
    await queryRunner.query(
      `CREATE TABLE "cohort_owners" ("cohort_id" integer NOT NULL, "contact_id" integer NOT NULL, CONSTRAINT "PK_2924f87fd79c791a4f110ef35bf" PRIMARY KEY ("cohort_id", "contact_id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_2d8b46a54b83b4068712483404" ON "cohort_owners"  ("cohort_id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_1e10a18ac7549d6a7551a39265" ON "cohort_owners"  ("contact_id") `,
    );
    await queryRunner.query(
      `CREATE TABLE "cohort_institutes" ("cohort_id" integer NOT NULL, "partner_id" integer NOT NULL, CONSTRAINT "PK_58d5b1f66af4bc19d3400a0bb94" PRIMARY KEY ("cohort_id", "partner_id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_9f0dbbc890e8959a9eb73eb612" ON "cohort_institutes"  ("cohort_id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_7e41efa5652c276f65f5d0b573" ON "cohort_institutes"  ("partner_id") `,
    );
    await queryRunner.query(
      `CREATE TABLE "contract_partner_role_contacts" ("contract_partner_role_id" integer NOT NULL, "contact_id" integer NOT NULL, CONSTRAINT "PK_7949e27d325db30b3fd86dfaf27" PRIMARY KEY ("contract_partner_role_id", "contact_id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_de66b20cdd554d0adaa7fec2ec" ON "contract_partner_role_contacts"  ("contract_partner_role_id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_529a6bafbd45c8ac8ec80d593f" ON "contract_partner_role_contacts"  ("contact_id") `,
    );
    await queryRunner.query(
      `CREATE TABLE "contract_local_custodians" ("contract_id" integer NOT NULL, "user_id" integer NOT NULL, CONSTRAINT "PK_7f53f667b1b88e9cf072e71e6a8" PRIMARY KEY ("contract_id", "user_id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_2b332da06250d22b6a5a300702" ON "contract_local_custodians"  ("contract_id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_d106c96adc85dd54f38773c4a0" ON "contract_local_custodians"  ("user_id") `,
    );
    await queryRunner.query(
      `CREATE TABLE "data_declaration_cohorts" ("data_declaration_id" integer NOT NULL, "cohort_id" integer NOT NULL, CONSTRAINT "PK_03308e98e5428a3bf5d507430f8" PRIMARY KEY ("data_declaration_id", "cohort_id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_31ca5c659ea655e6097c4ca4db" ON "data_declaration_cohorts"  ("data_declaration_id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_4ecec0246a33373005d10fcc1c" ON "data_declaration_cohorts"  ("cohort_id") `,
    );
    await queryRunner.query(
      `CREATE TABLE "dataset_local_custodians" ("dataset_id" integer NOT NULL, "user_id" integer NOT NULL, CONSTRAINT "PK_3ca3261da10b70772b90e7dcae7" PRIMARY KEY ("dataset_id", "user_id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_6e2620937bef592a5779e48fe7" ON "dataset_local_custodians"  ("dataset_id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_664745653e278329756759b5d0" ON "dataset_local_custodians"  ("user_id") `,
    );
    await queryRunner.query(
      `CREATE TABLE "access_storage_locations" ("access_id" integer NOT NULL, "storage_location_id" integer NOT NULL, CONSTRAINT "PK_8bd53472bf38a1cbabd9b2500c5" PRIMARY KEY ("access_id", "storage_location_id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_c2848041bd5beb116c36b8c9af" ON "access_storage_locations"  ("access_id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_4e79ea2545ab8b00211c1eb246" ON "access_storage_locations"  ("storage_location_id") `,
    );
    await queryRunner.query(
      `CREATE TABLE "legal_basis_data_declarations" ("legal_basis_id" integer NOT NULL, "data_declaration_id" integer NOT NULL, CONSTRAINT "PK_c3f47e4a7acf4a83cf8f77712e8" PRIMARY KEY ("legal_basis_id", "data_declaration_id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_4d22ec5178a983f703d1bcc1fd" ON "legal_basis_data_declarations"  ("legal_basis_id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_adb3a3040f7e4e155f860b54ba" ON "legal_basis_data_declarations"  ("data_declaration_id") `,
    );
    await queryRunner.query(
      `ALTER TABLE "users" ADD CONSTRAINT "FK_446c27a14be43d6dd4796a0f214" FOREIGN KEY ("affiliation_id") REFERENCES "partners"("id") ON DELETE SET NULL ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "publications" ADD CONSTRAINT "FK_567f4f8b27c5c83e3c4acc97a19" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "contract_partner_roles" ADD CONSTRAINT "FK_2925a992b1c0bd5e662eb06dcdb" FOREIGN KEY ("contract_id") REFERENCES "contracts"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "contract_partner_roles" ADD CONSTRAINT "FK_0801bb1a89340479769e636ee84" FOREIGN KEY ("partner_id") REFERENCES "partners"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "contracts" ADD CONSTRAINT "FK_6dbcbd3f7392ba65c8832e04435" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE SET NULL ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "use_conditions" ADD CONSTRAINT "FK_22218bbdcb2ed3d8280ef23233a" FOREIGN KEY ("data_declaration_id") REFERENCES "data_declarations"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "data_declarations" ADD CONSTRAINT "FK_fc33ebdc6529a7aca34bf31d93c" FOREIGN KEY ("dataset_id") REFERENCES "datasets"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "data_declarations" ADD CONSTRAINT "FK_569c07dc38260e323fb945eb47a" FOREIGN KEY ("partner_id") REFERENCES "partners"("id") ON DELETE SET NULL ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "data_declarations" ADD CONSTRAINT "FK_00fdaef1cb32329d81c7b63c390" FOREIGN KEY ("contract_id") REFERENCES "contracts"("id") ON DELETE SET NULL ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "datasets" ADD CONSTRAINT "FK_0bd61b0be85f417be961250475e" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE SET NULL ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "storage_locations" ADD CONSTRAINT "FK_9b229ca4238d1620ad9257ad88f" FOREIGN KEY ("dataset_id") REFERENCES "datasets"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "accesses" ADD CONSTRAINT "FK_e4b4a2737e3086ebb3fcfa2e302" FOREIGN KEY ("dataset_id") REFERENCES "datasets"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "accesses" ADD CONSTRAINT "FK_0853120b157fcdffeb6c3c4bad3" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "accesses" ADD CONSTRAINT "FK_aa6d2b3f518274a7487816128e1" FOREIGN KEY ("contact_id") REFERENCES "contacts"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "accesses" ADD CONSTRAINT "FK_5f827918e0b44d86062f284a161" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE SET NULL ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "accesses" ADD CONSTRAINT "FK_3b7903aca9af8694402ed17037f" FOREIGN KEY ("created_by_id") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "legal_bases" ADD CONSTRAINT "FK_586be02254ebd850c80d6992b22" FOREIGN KEY ("dataset_id") REFERENCES "datasets"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "transfers" ADD CONSTRAINT "FK_4825db769924f189873ec65520b" FOREIGN KEY ("dataset_id") REFERENCES "datasets"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "transfers" ADD CONSTRAINT "FK_a08258ded4c7185fd6708ddf956" FOREIGN KEY ("partner_id") REFERENCES "partners"("id") ON DELETE SET NULL ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "exposures" ADD CONSTRAINT "FK_827485780621c3b29b2149f4820" FOREIGN KEY ("dataset_id") REFERENCES "datasets"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "exposures" ADD CONSTRAINT "FK_4eec99207a4ebf2430ea9a1b123" FOREIGN KEY ("endpoint_id") REFERENCES "endpoints"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "exposures" ADD CONSTRAINT "FK_78ae1aaa9133071193b112635dd" FOREIGN KEY ("created_by_id") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "permission_grants" ADD CONSTRAINT "FK_d622eb8a1aa53a17c02d26390a8" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "permission_grants" ADD CONSTRAINT "FK_6c8dcadbffab42c8e6a7840d74b" FOREIGN KEY ("group_id") REFERENCES "groups"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "contact_partners" ADD CONSTRAINT "FK_d61e6a5896c4b8b34d98d3ac0fb" FOREIGN KEY ("contact_id") REFERENCES "contacts"("id") ON DELETE CASCADE ON UPDATE CASCADE`,
    );
    await queryRunner.query(
      `ALTER TABLE "contact_partners" ADD CONSTRAINT "FK_8e9830dd1dad17cce8cf9b9de52" FOREIGN KEY ("partner_id") REFERENCES "partners"("id") ON DELETE CASCADE ON UPDATE CASCADE`,
    );
    await queryRunner.query(
      `ALTER TABLE "user_groups" ADD CONSTRAINT "FK_95bf94c61795df25a5154350102" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE`,
    );
    await queryRunner.query(
      `ALTER TABLE "user_groups" ADD CONSTRAINT "FK_4c5f2c23c34f3921fbad2cd3940" FOREIGN KEY ("group_id") REFERENCES "groups"("id") ON DELETE CASCADE ON UPDATE CASCADE`,
    );
    await queryRunner.query(
      `ALTER TABLE "project_local_custodians" ADD CONSTRAINT "FK_2d72a9b7abcbc163da94e5534a2" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE`,
    );
    await queryRunner.query(
      `ALTER TABLE "project_local_custodians" ADD CONSTRAINT "FK_28d65f8299b26eb63bfd04e3561" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE`,
    );
    await queryRunner.query(
      `ALTER TABLE "project_company_personnel" ADD CONSTRAINT "FK_a61d0ed531a66e10479c39ef197" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE`,
    );
    await queryRunner.query(
      `ALTER TABLE "project_company_personnel" ADD CONSTRAINT "FK_550409b619e02840d369cc97966" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE`,
    );
    await queryRunner.query(
      `ALTER TABLE "project_contacts" ADD CONSTRAINT "FK_886c92d61d3cfe53327d003afa4" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE`,
    );
    await queryRunner.query(
      `ALTER TABLE "project_contacts" ADD CONSTRAINT "FK_741d1391a06d17417b07f6ce876" FOREIGN KEY ("contact_id") REFERENCES "contacts"("id") ON DELETE CASCADE ON UPDATE CASCADE`,
    );
    await queryRunner.query(
      `ALTER TABLE "project_terms" ADD CONSTRAINT "FK_4c211e2fb5b90d2e7d22e857eaf" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE`,
    );
    await queryRunner.query(
      `ALTER TABLE "project_terms" ADD CONSTRAINT "FK_b98a866038c0624917e27f0553f" FOREIGN KEY ("term_id") REFERENCES "terms"("id") ON DELETE CASCADE ON UPDATE CASCADE`,
    );
    await queryRunner.query(
      `ALTER TABLE "cohort_owners" ADD CONSTRAINT "FK_2d8b46a54b83b40687124834045" FOREIGN KEY ("cohort_id") REFERENCES "cohorts"("id") ON DELETE CASCADE ON UPDATE CASCADE`,
    );
    await queryRunner.query(
      `ALTER TABLE "cohort_owners" ADD CONSTRAINT "FK_1e10a18ac7549d6a7551a392657" FOREIGN KEY ("contact_id") REFERENCES "contacts"("id") ON DELETE CASCADE ON UPDATE CASCADE`,
    );
    await queryRunner.query(
      `ALTER TABLE "cohort_institutes" ADD CONSTRAINT "FK_9f0dbbc890e8959a9eb73eb6129" FOREIGN KEY ("cohort_id") REFERENCES "cohorts"("id") ON DELETE CASCADE ON UPDATE CASCADE`,
    );
    await queryRunner.query(
      `ALTER TABLE "cohort_institutes" ADD CONSTRAINT "FK_7e41efa5652c276f65f5d0b5731" FOREIGN KEY ("partner_id") REFERENCES "partners"("id") ON DELETE CASCADE ON UPDATE CASCADE`,
    );
    await queryRunner.query(
      `ALTER TABLE "contract_partner_role_contacts" ADD CONSTRAINT "FK_de66b20cdd554d0adaa7fec2ec2" FOREIGN KEY ("contract_partner_role_id") REFERENCES "contract_partner_roles"("id") ON DELETE CASCADE ON UPDATE CASCADE`,
    );
    await queryRunner.query(
      `ALTER TABLE "contract_partner_role_contacts" ADD CONSTRAINT "FK_529a6bafbd45c8ac8ec80d593f6" FOREIGN KEY ("contact_id") REFERENCES "contacts"("id") ON DELETE CASCADE ON UPDATE CASCADE`,
    );
    await queryRunner.query(
      `ALTER TABLE "contract_local_custodians" ADD CONSTRAINT "FK_2b332da06250d22b6a5a3007028" FOREIGN KEY ("contract_id") REFERENCES "contracts"("id") ON DELETE CASCADE ON UPDATE CASCADE`,
    );
    await queryRunner.query(
      `ALTER TABLE "contract_local_custodians" ADD CONSTRAINT "FK_d106c96adc85dd54f38773c4a02" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE`,
    );
    await queryRunner.query(
      `ALTER TABLE "data_declaration_cohorts" ADD CONSTRAINT "FK_31ca5c659ea655e6097c4ca4db6" FOREIGN KEY ("data_declaration_id") REFERENCES "data_declarations"("id") ON DELETE CASCADE ON UPDATE CASCADE`,
    );
    await queryRunner.query(
      `ALTER TABLE "data_declaration_cohorts" ADD CONSTRAINT "FK_4ecec0246a33373005d10fcc1c2" FOREIGN KEY ("cohort_id") REFERENCES "cohorts"("id") ON DELETE CASCADE ON UPDATE CASCADE`,
    );
    await queryRunner.query(
      `ALTER TABLE "dataset_local_custodians" ADD CONSTRAINT "FK_6e2620937bef592a5779e48fe79" FOREIGN KEY ("dataset_id") REFERENCES "datasets"("id") ON DELETE CASCADE ON UPDATE CASCADE`,
    );
    await queryRunner.query(
      `ALTER TABLE "dataset_local_custodians" ADD CONSTRAINT "FK_664745653e278329756759b5d08" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE`,
    );
    await queryRunner.query(
      `ALTER TABLE "access_storage_locations" ADD CONSTRAINT "FK_c2848041bd5beb116c36b8c9afa" FOREIGN KEY ("access_id") REFERENCES "accesses"("id") ON DELETE CASCADE ON UPDATE CASCADE`,
    );
    await queryRunner.query(
      `ALTER TABLE "access_storage_locations" ADD CONSTRAINT "FK_4e79ea2545ab8b00211c1eb246e" FOREIGN KEY ("storage_location_id") REFERENCES "storage_locations"("id") ON DELETE CASCADE ON UPDATE CASCADE`,
    );
    await queryRunner.query(
      `ALTER TABLE "legal_basis_data_declarations" ADD CONSTRAINT "FK_4d22ec5178a983f703d1bcc1fdd" FOREIGN KEY ("legal_basis_id") REFERENCES "legal_bases"("id") ON DELETE CASCADE ON UPDATE CASCADE`,
    );
    await queryRunner.query(
      `ALTER TABLE "legal_basis_data_declarations" ADD CONSTRAINT "FK_adb3a3040f7e4e155f860b54ba9" FOREIGN KEY ("data_declaration_id") REFERENCES "data_declarations"("id") ON DELETE CASCADE ON UPDATE CASCADE`,
    );
    await queryRunner.query(`INSERT INTO "catalog_version" ("id", "version") VALUES (1, 1)`);
    await queryRunner.query(`CREATE FUNCTION "bump_catalog_version"() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                UPDATE "catalog_version" SET "version" = "version" + 1 WHERE "id" = 1;
                RETURN NULL;
            END $$`);
    for (const table of CATALOG_DATA_TABLES) {
      await queryRunner.query(`CREATE TRIGGER "${table}_bump_catalog_version"
                AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "${table}"
                FOR EACH STATEMENT EXECUTE FUNCTION "bump_catalog_version"()`);
    }
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "legal_basis_data_declarations" DROP CONSTRAINT "FK_adb3a3040f7e4e155f860b54ba9"`,
    );
    await queryRunner.query(
      `ALTER TABLE "legal_basis_data_declarations" DROP CONSTRAINT "FK_4d22ec5178a983f703d1bcc1fdd"`,
    );
    await queryRunner.query(
      `ALTER TABLE "access_storage_locations" DROP CONSTRAINT "FK_4e79ea2545ab8b00211c1eb246e"`,
    );
    await queryRunner.query(
      `ALTER TABLE "access_storage_locations" DROP CONSTRAINT "FK_c2848041bd5beb116c36b8c9afa"`,
    );
    await queryRunner.query(
      `ALTER TABLE "dataset_local_custodians" DROP CONSTRAINT "FK_664745653e278329756759b5d08"`,
    );
    await queryRunner.query(
      `ALTER TABLE "dataset_local_custodians" DROP CONSTRAINT "FK_6e2620937bef592a5779e48fe79"`,
    );
    await queryRunner.query(
      `ALTER TABLE "data_declaration_cohorts" DROP CONSTRAINT "FK_4ecec0246a33373005d10fcc1c2"`,
    );
    await queryRunner.query(
      `ALTER TABLE "data_declaration_cohorts" DROP CONSTRAINT "FK_31ca5c659ea655e6097c4ca4db6"`,
    );
    await queryRunner.query(
      `ALTER TABLE "contract_local_custodians" DROP CONSTRAINT "FK_d106c96adc85dd54f38773c4a02"`,
    );
    await queryRunner.query(
      `ALTER TABLE "contract_local_custodians" DROP CONSTRAINT "FK_2b332da06250d22b6a5a3007028"`,
    );
    await queryRunner.query(
      `ALTER TABLE "contract_partner_role_contacts" DROP CONSTRAINT "FK_529a6bafbd45c8ac8ec80d593f6"`,
    );
    await queryRunner.query(
      `ALTER TABLE "contract_partner_role_contacts" DROP CONSTRAINT "FK_de66b20cdd554d0adaa7fec2ec2"`,
    );
    await queryRunner.query(
      `ALTER TABLE "cohort_institutes" DROP CONSTRAINT "FK_7e41efa5652c276f65f5d0b5731"`,
    );
    await queryRunner.query(
      `ALTER TABLE "cohort_institutes" DROP CONSTRAINT "FK_9f0dbbc890e8959a9eb73eb6129"`,
    );
    await queryRunner.query(
      `ALTER TABLE "cohort_owners" DROP CONSTRAINT "FK_1e10a18ac7549d6a7551a392657"`,
    );
    await queryRunner.query(
      `ALTER TABLE "cohort_owners" DROP CONSTRAINT "FK_2d8b46a54b83b40687124834045"`,
    );
    await queryRunner.query(
      `ALTER TABLE "project_terms" DROP CONSTRAINT "FK_b98a866038c0624917e27f0553f"`,
    );
    await queryRunner.query(
      `ALTER TABLE "project_terms" DROP CONSTRAINT "FK_4c211e2fb5b90d2e7d22e857eaf"`,
    );
    await queryRunner.query(
      `ALTER TABLE "project_contacts" DROP CONSTRAINT "FK_741d1391a06d17417b07f6ce876"`,
    );
    await queryRunner.query(
      `ALTER TABLE "project_contacts" DROP CONSTRAINT "FK_886c92d61d3cfe53327d003afa4"`,
    );
    await queryRunner.query(
      `ALTER TABLE "project_company_personnel" DROP CONSTRAINT "FK_550409b619e02840d369cc97966"`,
    );
    await queryRunner.query(
      `ALTER TABLE "project_company_personnel" DROP CONSTRAINT "FK_a61d0ed531a66e10479c39ef197"`,
    );
    await queryRunner.query(
      `ALTER TABLE "project_local_custodians" DROP CONSTRAINT "FK_28d65f8299b26eb63bfd04e3561"`,
    );
    await queryRunner.query(
      `ALTER TABLE "project_local_custodians" DROP CONSTRAINT "FK_2d72a9b7abcbc163da94e5534a2"`,
    );
    await queryRunner.query(
      `ALTER TABLE "user_groups" DROP CONSTRAINT "FK_4c5f2c23c34f3921fbad2cd3940"`,
    );
    await queryRunner.query(
      `ALTER TABLE "user_groups" DROP CONSTRAINT "FK_95bf94c61795df25a5154350102"`,
    );
    await queryRunner.query(
      `ALTER TABLE "contact_partners" DROP CONSTRAINT "FK_8e9830dd1dad17cce8cf9b9de52"`,
    );
    await queryRunner.query(
      `ALTER TABLE "contact_partners" DROP CONSTRAINT "FK_d61e6a5896c4b8b34d98d3ac0fb"`,
    );
    await queryRunner.query(
      `ALTER TABLE "permission_grants" DROP CONSTRAINT "FK_6c8dcadbffab42c8e6a7840d74b"`,
    );
    await queryRunner.query(
      `ALTER TABLE "permission_grants" DROP CONSTRAINT "FK_d622eb8a1aa53a17c02d26390a8"`,
    );
    await queryRunner.query(
      `ALTER TABLE "exposures" DROP CONSTRAINT "FK_78ae1aaa9133071193b112635dd"`,
    );
    await queryRunner.query(
      `ALTER TABLE "exposures" DROP CONSTRAINT "FK_4eec99207a4ebf2430ea9a1b123"`,
    );
    await queryRunner.query(
      `ALTER TABLE "exposures" DROP CONSTRAINT "FK_827485780621c3b29b2149f4820"`,
    );
    await queryRunner.query(
      `ALTER TABLE "transfers" DROP CONSTRAINT "FK_a08258ded4c7185fd6708ddf956"`,
    );
    await queryRunner.query(
      `ALTER TABLE "transfers" DROP CONSTRAINT "FK_4825db769924f189873ec65520b"`,
    );
    await queryRunner.query(
      `ALTER TABLE "legal_bases" DROP CONSTRAINT "FK_586be02254ebd850c80d6992b22"`,
    );
    await queryRunner.query(
      `ALTER TABLE "accesses" DROP CONSTRAINT "FK_3b7903aca9af8694402ed17037f"`,
    );
    await queryRunner.query(
      `ALTER TABLE "accesses" DROP CONSTRAINT "FK_5f827918e0b44d86062f284a161"`,
    );
    await queryRunner.query(
      `ALTER TABLE "accesses" DROP CONSTRAINT "FK_aa6d2b3f518274a7487816128e1"`,
    );
    await queryRunner.query(
      `ALTER TABLE "accesses" DROP CONSTRAINT "FK_0853120b157fcdffeb6c3c4bad3"`,
    );
    await queryRunner.query(
      `ALTER TABLE "accesses" DROP CONSTRAINT "FK_e4b4a2737e3086ebb3fcfa2e302"`,
    );
    await queryRunner.query(
      `ALTER TABLE "storage_locations" DROP CONSTRAINT "FK_9b229ca4238d1620ad9257ad88f"`,
    );
    await queryRunner.query(
      `ALTER TABLE "datasets" DROP CONSTRAINT "FK_0bd61b0be85f417be961250475e"`,
    );
    await queryRunner.query(
      `ALTER TABLE "data_declarations" DROP CONSTRAINT "FK_00fdaef1cb32329d81c7b63c390"`,
    );
    await queryRunner.query(
      `ALTER TABLE "data_declarations" DROP CONSTRAINT "FK_569c07dc38260e323fb945eb47a"`,
    );
    await queryRunner.query(
      `ALTER TABLE "data_declarations" DROP CONSTRAINT "FK_fc33ebdc6529a7aca34bf31d93c"`,
    );
    await queryRunner.query(
      `ALTER TABLE "use_conditions" DROP CONSTRAINT "FK_22218bbdcb2ed3d8280ef23233a"`,
    );
    await queryRunner.query(
      `ALTER TABLE "contracts" DROP CONSTRAINT "FK_6dbcbd3f7392ba65c8832e04435"`,
    );
    await queryRunner.query(
      `ALTER TABLE "contract_partner_roles" DROP CONSTRAINT "FK_0801bb1a89340479769e636ee84"`,
    );
    await queryRunner.query(
      `ALTER TABLE "contract_partner_roles" DROP CONSTRAINT "FK_2925a992b1c0bd5e662eb06dcdb"`,
    );
    await queryRunner.query(
      `ALTER TABLE "publications" DROP CONSTRAINT "FK_567f4f8b27c5c83e3c4acc97a19"`,
    );
    await queryRunner.query(`ALTER TABLE "users" DROP CONSTRAINT "FK_446c27a14be43d6dd4796a0f214"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_adb3a3040f7e4e155f860b54ba"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_4d22ec5178a983f703d1bcc1fd"`);
    await queryRunner.query(`DROP TABLE "legal_basis_data_declarations"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_4e79ea2545ab8b00211c1eb246"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_c2848041bd5beb116c36b8c9af"`);
    await queryRunner.query(`DROP TABLE "access_storage_locations"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_664745653e278329756759b5d0"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_6e2620937bef592a5779e48fe7"`);
    await queryRunner.query(`DROP TABLE "dataset_local_custodians"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_4ecec0246a33373005d10fcc1c"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_31ca5c659ea655e6097c4ca4db"`);
    await queryRunner.query(`DROP TABLE "data_declaration_cohorts"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_d106c96adc85dd54f38773c4a0"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_2b332da06250d22b6a5a300702"`);
    await queryRunner.query(`DROP TABLE "contract_local_custodians"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_529a6bafbd45c8ac8ec80d593f"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_de66b20cdd554d0adaa7fec2ec"`);
    await queryRunner.query(`DROP TABLE "contract_partner_role_contacts"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_7e41efa5652c276f65f5d0b573"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_9f0dbbc890e8959a9eb73eb612"`);
    await queryRunner.query(`DROP TABLE "cohort_institutes"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_1e10a18ac7549d6a7551a39265"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_2d8b46a54b83b4068712483404"`);
    await queryRunner.query(`DROP TABLE "cohort_owners"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_b98a866038c0624917e27f0553"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_4c211e2fb5b90d2e7d22e857ea"`);
    await queryRunner.query(`DROP TABLE "project_terms"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_741d1391a06d17417b07f6ce87"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_886c92d61d3cfe53327d003afa"`);
    await queryRunner.query(`DROP TABLE "project_contacts"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_550409b619e02840d369cc9796"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_a61d0ed531a66e10479c39ef19"`);
    await queryRunner.query(`DROP TABLE "project_company_personnel"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_28d65f8299b26eb63bfd04e356"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_2d72a9b7abcbc163da94e5534a"`);
    await queryRunner.query(`DROP TABLE "project_local_custodians"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_4c5f2c23c34f3921fbad2cd394"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_95bf94c61795df25a515435010"`);
    await queryRunner.query(`DROP TABLE "user_groups"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_8e9830dd1dad17cce8cf9b9de5"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_d61e6a5896c4b8b34d98d3ac0f"`);
    await queryRunner.query(`DROP TABLE "contact_partners"`);
    await queryRunner.query(`DROP INDEX "public"."UQ_permission_grants_user"`);
    await queryRunner.query(`DROP INDEX "public"."UQ_permission_grants_group"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_permission_grants_object"`);
    await queryRunner.query(`DROP TABLE "permission_grants"`);
    await queryRunner.query(`DROP TYPE "public"."grant_object_type"`);
    await queryRunner.query(`DROP TYPE "public"."grantable_permission"`);
    await queryRunner.query(`DROP INDEX "public"."UQ_exposures_active_dataset_endpoint"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_exposures_endpoint"`);
    await queryRunner.query(`DROP TABLE "exposures"`);
    await queryRunner.query(`DROP TABLE "endpoints"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_transfers_dataset"`);
    await queryRunner.query(`DROP TABLE "transfers"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_legal_bases_dataset"`);
    await queryRunner.query(`DROP TABLE "legal_bases"`);
    await queryRunner.query(`DROP TYPE "public"."personal_data_code"`);
    await queryRunner.query(`DROP TYPE "public"."legal_basis_code"`);
    await queryRunner.query(`DROP TABLE "catalog_version"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_accesses_dataset"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_accesses_user"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_accesses_contact"`);
    await queryRunner.query(`DROP TABLE "accesses"`);
    await queryRunner.query(`DROP TYPE "public"."access_status"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_storage_locations_dataset"`);
    await queryRunner.query(`DROP TABLE "storage_locations"`);
    await queryRunner.query(`DROP TYPE "public"."storage_category"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_datasets_project"`);
    await queryRunner.query(`DROP TABLE "datasets"`);
    await queryRunner.query(`DROP TABLE "data_declarations"`);
    await queryRunner.query(`DROP TYPE "public"."consent_status"`);
    await queryRunner.query(`DROP TYPE "public"."de_identification_method"`);
    await queryRunner.query(`DROP TYPE "public"."subjects_category"`);
    await queryRunner.query(`DROP TYPE "public"."access_category"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_use_conditions_declaration"`);
    await queryRunner.query(`DROP TABLE "use_conditions"`);
    await queryRunner.query(`DROP TYPE "public"."use_condition_rule"`);
    await queryRunner.query(`DROP TYPE "public"."use_class"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_contracts_project"`);
    await queryRunner.query(`DROP TABLE "contracts"`);
    await queryRunner.query(`DROP TABLE "contract_partner_roles"`);
    await queryRunner.query(`DROP TYPE "public"."gdpr_role"`);
    await queryRunner.query(`DROP TABLE "cohorts"`);
    await queryRunner.query(`DROP TABLE "projects"`);
    await queryRunner.query(`DROP INDEX "public"."IDX_publications_project"`);
    await queryRunner.query(`DROP TABLE "publications"`);
    await queryRunner.query(`DROP TABLE "users"`);
    await queryRunner.query(`DROP TABLE "groups"`);
    await queryRunner.query(`DROP TABLE "contacts"`);
    await queryRunner.query(`DROP TYPE "public"."contact_type"`);
    await queryRunner.query(`DROP TABLE "partners"`);
    await queryRunner.query(`DROP TYPE "public"."sector_category"`);
    await queryRunner.query(`DROP TYPE "public"."geo_category"`);
    await queryRunner.query(`DROP FUNCTION "bump_catalog_version"()`);
    await queryRunner.query(`DROP SEQUENCE "elu_accession_seq"`);
  }
}
