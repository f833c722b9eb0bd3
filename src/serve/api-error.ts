/**
 * An error the API answers with: an HTTP status and `{error: {code, message}}` — every error the
 * server returns has that one shape.
 */
import { describeError, isNaviError } from '../errors.js';

export class ApiError extends Error {
  constructor(
    readonly status: 400 | 401 | 403 | 404 | 409 | 413 | 415 | 500 | 503,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export const notFound = (what: string, id: string): ApiError => new ApiError(404, 'not_found', `no ${what} '${id}'`);

/** Any thrown value as an ApiError: navi's invalid-input errors are 400, the rest 500. */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (isNaviError(err)) return new ApiError(err.status === 'invalid_input' ? 400 : 500, err.code, err.message);
  return new ApiError(500, 'internal_error', `unexpected error: ${describeError(err)}`);
}

export function errorJson(err: ApiError): { error: { code: string; message: string } } {
  return { error: { code: err.code, message: err.message } };
}
