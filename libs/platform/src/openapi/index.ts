export {
  setupOpenApi,
  buildOpenApiDocument,
  API_KEY_HEADER_SCHEME,
  API_KEY_QUERY_SCHEME,
  BEARER_SCHEME,
} from './setup-openapi';
export type { OpenApiOptions } from './setup-openapi';
export { ApiErrorResponses, ERROR_ENVELOPE, ERROR_DESCRIPTIONS } from './error-responses';
