/** The schema a dataset export follows; its fields are written by `DatasetsRepository.findExportPages`. */
export const DATASET_SCHEMA_URL =
  'https://raw.githubusercontent.com/elixir-luxembourg/json-schemas/v0.0.6/schemas/elu-dataset.json';
