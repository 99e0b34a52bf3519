import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';

/** A new exposure's columns. */
export interface NewExposure {
  datasetId: number;
  endpointId: number;
  formId: number;
  formName: string | null;
  requestPdfEnabled: boolean;
}

/** An exposure with its dataset's accession and its endpoint's name. */
export interface ExposureRecord {
  id: number;
  dataset: string | null;
  endpoint: string;
  form_id: number;
  form_name: string | null;
  request_pdf_enabled: boolean;
  created_at: Date;
  deprecated_at: Date | null;
  deprecation_reason: string | null;
}

/** Endpoints and the exposures of datasets to them, in the caller's transaction (`manager`). */
@Injectable()
export class EndpointsRepository {
  /** Whether an endpoint already has this name, ignoring case. */
  async nameTaken(manager: EntityManager, name: string): Promise<boolean> {
    const taken = await manager.query<unknown[]>(
      'SELECT 1 FROM endpoints WHERE lower(name) = lower($1)',
      [name],
    );
    return taken.length > 0;
  }

  /** Inserts an endpoint holding the key whose SHA-256 is `keyHash`; its id. */
  async insert(
    manager: EntityManager,
    name: string,
    urlPattern: string,
    keyHash: string,
  ): Promise<number> {
    const rows = await manager.query<{ id: number }[]>(
      'INSERT INTO endpoints (name, url_pattern, api_key_hash) VALUES ($1, $2, $3) RETURNING id',
      [name, urlPattern, keyHash],
    );
    return rows[0].id;
  }

  /**
   * The endpoint with this name in any case: names are unique whatever their case (see
   * `nameTaken`), so a name is one name wherever it is looked up.
   */
  async idByName(manager: EntityManager, name: string): Promise<number | undefined> {
    const endpoints = await manager.query<{ id: number }[]>(
      'SELECT id FROM endpoints WHERE lower(name) = lower($1)',
      [name],
    );
    return endpoints[0]?.id;
  }

  /** Whether the dataset has an exposure on the endpoint, withdrawn or not. */
  async hasExposure(
    manager: EntityManager,
    datasetId: number,
    endpointId: number,
  ): Promise<boolean> {
    const found = await manager.query<unknown[]>(
      'SELECT 1 FROM exposures WHERE dataset_id = $1 AND endpoint_id = $2',
      [datasetId, endpointId],
    );
    return found.length > 0;
  }

  /** Whether the dataset has an exposure on the endpoint that is not withdrawn. */
  async hasActiveExposure(
    manager: EntityManager,
    datasetId: number,
    endpointId: number,
  ): Promise<boolean> {
    const active = await manager.query<unknown[]>(
      'SELECT 1 FROM exposures WHERE dataset_id = $1 AND endpoint_id = $2 AND deprecated_at IS NULL',
      [datasetId, endpointId],
    );
    return active.length > 0;
  }

  /** Inserts an exposure; its id. */
  async insertExposure(manager: EntityManager, exposure: NewExposure): Promise<number> {
    const rows = await manager.query<{ id: number }[]>(
      `INSERT INTO exposures (dataset_id, endpoint_id, form_id, form_name, request_pdf_enabled)
             VALUES ($1, $2, $3, $4, $5) RETURNING id`,
      [
        exposure.datasetId,
        exposure.endpointId,
        exposure.formId,
        exposure.formName,
        exposure.requestPdfEnabled,
      ],
    );
    return rows[0].id;
  }

  /** Locks the exposure for the transaction; when it was withdrawn (null: active), or undefined when there is none. */
  async lockExposure(manager: EntityManager, id: number): Promise<Date | null | undefined> {
    const rows = await manager.query<{ deprecated_at: Date | null }[]>(
      'SELECT deprecated_at FROM exposures WHERE id = $1 FOR UPDATE',
      [id],
    );
    return rows[0]?.deprecated_at;
  }

  /** Deprecates the exposure now, for `reason`. */
  async withdrawExposure(manager: EntityManager, id: number, reason: string): Promise<void> {
    await manager.query(
      'UPDATE exposures SET deprecated_at = now(), deprecation_reason = $2, updated_at = now() WHERE id = $1',
      [id, reason],
    );
  }

  /** The exposure with its dataset's accession and its endpoint's name (it must exist). */
  async exposure(manager: EntityManager, id: number): Promise<ExposureRecord> {
    const rows = await manager.query<ExposureRecord[]>(
      `SELECT e.id, d.elu_accession AS dataset, en.name AS endpoint, e.form_id, e.form_name,
         e.request_pdf_enabled, e.created_at, e.deprecated_at, e.deprecation_reason
       FROM exposures e JOIN datasets d ON d.id = e.dataset_id JOIN endpoints en ON en.id = e.endpoint_id
       WHERE e.id = $1`,
      [id],
    );
    return rows[0];
  }
}
