import { ApiException } from '@kubernetes/client-node';
import { ErrorCodes, KinformerError } from 'kinformer';
import type { Status } from 'kinformer';

/**
 * The `KinformerError` for a failed `@kubernetes/client-node` request, so that the controller can
 * branch on stable codes: 409 (Conflict or AlreadyExists) → `ERR_CONFLICT`, 404 → `ERR_NOT_FOUND`,
 * any other answer with a `Status` body → `KinformerError.fromStatus`, an aborted request →
 * `ERR_ABORTED`, anything else (refused, reset) → `ERR_CONNECTION`. A `KinformerError` (for example
 * one thrown by a test hook) passes through unchanged. `what` names the object for the message.
 */
export function apiError(err: unknown, what: string, signal?: AbortSignal): KinformerError {
  if (err instanceof KinformerError) return err;
  const details = { object: what };
  if (err instanceof ApiException) {
    const httpStatus = err.code;
    const status = statusOf(err.body);
    if (status !== undefined) return KinformerError.fromStatus(status, { cause: err, httpStatus, details });
    const code = KinformerError.fromStatus({ code: httpStatus }).code;
    return new KinformerError(code, `the server answered ${httpStatus} for ${what}`, {
      cause: err,
      httpStatus,
      details,
    });
  }
  if (signal?.aborted || (err instanceof Error && err.name === 'AbortError')) {
    return new KinformerError(ErrorCodes.ABORTED, `the request for ${what} was aborted`, {
      cause: signal?.reason ?? err,
      details,
    });
  }
  const message = err instanceof Error ? err.message : String(err);
  return new KinformerError(ErrorCodes.CONNECTION, `request for ${what} failed: ${message}`, {
    cause: err,
    details,
  });
}

/** The Status in an ApiException body (client-node 2.x hands error bodies over as text). */
function statusOf(body: unknown): Status | undefined {
  let value = body;
  if (typeof value === 'string') {
    if (!value.trimStart().startsWith('{')) return undefined;
    try {
      value = JSON.parse(value);
    } catch {
      return undefined;
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const v = value as Record<string, unknown>;
  return v.kind === 'Status' ? v : undefined;
}
