import { KinformerError, type Status } from '@kinformer/core';
import type { ResourceType } from '../registry/resourceRegistry.js';

/**
 * The API server's `Status` error bodies (§5 of the protocol reference), built with the Go struct's
 * key order (`kind, apiVersion, metadata, status, message, reason, details, code`) so that they
 * serialise byte for byte like the real ones. Each builder returns a {@link KinformerError} whose
 * `status` is the body and whose `httpStatus` is the HTTP code; the HTTP layer writes exactly that.
 */

type StatusDetails = NonNullable<Status['details']>;

/** Builds a `Status` with the canonical key order, omitting empty fields as Go's `omitempty` does. */
export function makeStatus(options: {
  code?: number;
  status?: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  details?: StatusDetails;
  metadata?: Status['metadata'];
}): Status {
  const out: Status = {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: options.metadata ?? {},
    status: options.status ?? 'Failure',
  };
  if (options.message) out.message = options.message;
  if (options.reason) out.reason = options.reason;
  if (options.details) {
    const d = options.details;
    const details: StatusDetails = {};
    if (d.name) details.name = d.name;
    if (d.group) details.group = d.group;
    if (d.kind) details.kind = d.kind;
    if (d.uid) details.uid = d.uid;
    if (d.causes && d.causes.length > 0) details.causes = d.causes;
    if (d.retryAfterSeconds) details.retryAfterSeconds = d.retryAfterSeconds;
    out.details = details;
  }
  if (options.code) out.code = options.code;
  return out;
}

/** The error carrying `status` (HTTP code = `status.code`, or `httpStatus` for bodies without one). */
export function statusError(status: Status, httpStatus?: number): KinformerError {
  return KinformerError.fromStatus(status, httpStatus === undefined ? {} : { httpStatus });
}

function failure(
  code: number,
  reason: string | undefined,
  message: string,
  details?: StatusDetails,
  metadata?: Status['metadata'],
): KinformerError {
  return statusError(
    makeStatus({
      code,
      message,
      ...(reason === undefined ? {} : { reason }),
      ...(details === undefined ? {} : { details }),
      ...(metadata === undefined ? {} : { metadata }),
    }),
  );
}

/** 404 `pods "foo" not found`. */
export function notFoundError(type: ResourceType, name: string): KinformerError {
  return failure(404, 'NotFound', `${type.qualifiedResource} ${JSON.stringify(name)} not found`, {
    name,
    group: type.group,
    kind: type.resource,
  });
}

/** 404 for a known path that serves nothing (`the server could not find the requested resource`). */
export function genericNotFoundError(): KinformerError {
  return failure(404, 'NotFound', 'the server could not find the requested resource', {});
}

/** 409 `pods "foo" already exists`. */
export function alreadyExistsError(type: ResourceType, name: string): KinformerError {
  return failure(409, 'AlreadyExists', `${type.qualifiedResource} ${JSON.stringify(name)} already exists`, {
    name,
    group: type.group,
    kind: type.resource,
  });
}

/** The optimistic-concurrency failure message of a stale `resourceVersion`. */
export const OBJECT_MODIFIED =
  'the object has been modified; please apply your changes to the latest version and try again';

/** `NewConflict(GroupResource{group, resource}, name, detail)`. */
function conflict(group: string, resource: string, name: string, detail: string): KinformerError {
  const qualified = group === '' ? resource : `${resource}.${group}`;
  return failure(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${qualified} ${JSON.stringify(name)}: ${detail}`,
    {
      name,
      group,
      kind: resource,
    },
  );
}

/** 409 `Operation cannot be fulfilled on pods "foo": <detail>`. */
export function conflictError(
  type: ResourceType,
  name: string,
  detail: string = OBJECT_MODIFIED,
): KinformerError {
  return conflict(type.group, type.resource, name, detail);
}

/**
 * 409 of a failed DELETE precondition, as `rest.BeforeDelete` builds it (`registry/rest/delete.go`):
 * the conflict is named by the *Kind* (`GroupResource{Group, Resource: Kind}`), so the message says
 * `Operation cannot be fulfilled on ConfigMap "x": …` (`Deployment.apps` for a group) and
 * `details.kind` is the Kind.
 */
export function preconditionConflictError(type: ResourceType, name: string, detail: string): KinformerError {
  return conflict(type.group, type.kind, name, detail);
}

/** One `field.Error`: its type (the cause's `reason`), path and body (`Forbidden: …`). */
export interface FieldError {
  type: 'FieldValueRequired' | 'FieldValueForbidden' | 'FieldValueInvalid' | 'FieldValueNotSupported';
  field: string;
  /** The text after `<field>: `, e.g. `Forbidden: resourceVersionMatch is forbidden …`. */
  body: string;
}

/** `field.Forbidden(path, detail)`. */
export function forbiddenField(field: string, detail: string): FieldError {
  return { type: 'FieldValueForbidden', field, body: `Forbidden: ${detail}` };
}

/** `field.Required(path, detail)`. */
export function requiredField(field: string, detail: string): FieldError {
  return { type: 'FieldValueRequired', field, body: `Required value: ${detail}` };
}

/**
 * `field.NotSupported(path, value, supported)`. `formatted`: `value` is already printed as Go prints
 * it (a list as its JSON), else it is a string and gets quoted.
 */
export function notSupportedField(
  field: string,
  value: string,
  supported: readonly string[],
  formatted = false,
): FieldError {
  const list = supported.map((s) => JSON.stringify(s)).join(', ');
  return {
    type: 'FieldValueNotSupported',
    field,
    body: `Unsupported value: ${formatted ? value : JSON.stringify(value)}: supported values: ${list}`,
  };
}

/** `field.Invalid(path, value, detail)`; `value` is already formatted as Go prints it. */
export function invalidField(field: string, value: string, detail: string): FieldError {
  return { type: 'FieldValueInvalid', field, body: `Invalid value: ${value}: ${detail}` };
}

/**
 * 422 `NewInvalid(qualifiedKind, name, errs)`: message `<Kind.group> "<name>" is invalid: <err>` (or
 * `[<err1>, <err2>]`), details `{name, group, kind, causes}`.
 */
export function invalidError(
  group: string,
  kind: string,
  name: string,
  errors: readonly FieldError[],
): KinformerError {
  const texts = errors.map((e) => `${e.field}: ${e.body}`);
  const joined = texts.length === 1 ? texts[0]! : `[${texts.join(', ')}]`;
  const qualified = group === '' ? kind : `${kind}.${group}`;
  return failure(422, 'Invalid', `${qualified} ${JSON.stringify(name)} is invalid: ${joined}`, {
    name,
    group,
    kind,
    causes: errors.map((e) => ({ reason: e.type, message: e.body, field: e.field })),
  });
}

/** 422 for bad `ListOptions` (§3.3, §4.1). */
export function listOptionsInvalidError(errors: readonly FieldError[]): KinformerError {
  return invalidError('meta.k8s.io', 'ListOptions', '', errors);
}

/** 400 BadRequest with `message`. */
export function badRequestError(message: string): KinformerError {
  return failure(400, 'BadRequest', message);
}

/** 410 Expired with `message` (and `metadata.continue` for the continue variant). */
export function expiredError(message: string, metadata?: Status['metadata']): KinformerError {
  return failure(410, 'Expired', message, undefined, metadata);
}

/** The message of an expired list at an exact resourceVersion (etcd compaction). */
export const LIST_TOO_OLD = 'The resourceVersion for the provided list is too old.';

/** The message of an expired continue token that comes with a fresh `rv: -1` token. */
export const CONTINUE_TOO_OLD =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';

/** A watch's too-old error: `too old resource version: X (Y)`. */
export function tooOldWatchStatus(requested: number, oldest: number): Status {
  return makeStatus({
    code: 410,
    reason: 'Expired',
    message: `too old resource version: ${requested} (${oldest})`,
  });
}

/** 504 `Timeout: Too large resource version: N, current: M` with the `ResourceVersionTooLarge` cause. */
export function tooLargeResourceVersionStatus(requested: number, current: number): Status {
  return makeStatus({
    code: 504,
    reason: 'Timeout',
    message: `Timeout: Too large resource version: ${requested}, current: ${current}`,
    details: {
      causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
      retryAfterSeconds: 1,
    },
  });
}

/** 504 for a request that took too long (`Timeout: request did not complete within the allotted timeout`). */
export function timeoutError(
  message = 'Timeout: request did not complete within the allotted timeout',
): KinformerError {
  return failure(504, 'Timeout', message, {});
}

/** 429 from the watch cache while it (re)initialises, with `retryAfterSeconds`. */
export function tooManyRequestsError(
  retryAfterSeconds: number,
  message = 'storage is (re)initializing',
): KinformerError {
  return failure(429, 'TooManyRequests', message, { retryAfterSeconds });
}

/** 500 InternalError. */
export function internalError(cause: string): KinformerError {
  return failure(500, 'InternalError', `Internal error occurred: ${cause}`, { causes: [{ message: cause }] });
}

/** 503 ServiceUnavailable. */
export function serviceUnavailableError(
  retryAfterSeconds: number,
  message = 'the request has been made before all known HTTP paths have been installed, please try again',
): KinformerError {
  return failure(503, 'ServiceUnavailable', message, { retryAfterSeconds });
}

/** 401 Unauthorized. */
export function unauthorizedError(): KinformerError {
  return failure(401, 'Unauthorized', 'Unauthorized');
}

/** 403 with the authorizer's wording (namespaced vs cluster scope). */
export function forbiddenError(
  verb: string,
  type: ResourceType,
  namespace: string | undefined,
  name: string | undefined,
  user = 'system:anonymous',
): KinformerError {
  const scope = namespace ? `in the namespace ${JSON.stringify(namespace)}` : 'at the cluster scope';
  const what = name ? `${type.qualifiedResource} ${JSON.stringify(name)}` : type.qualifiedResource;
  return failure(
    403,
    'Forbidden',
    `${what} is forbidden: User ${JSON.stringify(user)} cannot ${verb} resource ${JSON.stringify(type.resource)} in API group ${JSON.stringify(type.group)} ${scope}`,
    { ...(name ? { name } : {}), group: type.group, kind: type.resource },
  );
}

/** 405 MethodNotAllowed. */
export function methodNotAllowedError(): KinformerError {
  return failure(
    405,
    'MethodNotAllowed',
    'the server does not allow this method on the requested resource',
    {},
  );
}

/** 406 NotAcceptable. */
export function notAcceptableError(message: string): KinformerError {
  return failure(406, 'NotAcceptable', message);
}

/** 415 UnsupportedMediaType. */
export function unsupportedMediaTypeError(message: string): KinformerError {
  return failure(415, 'UnsupportedMediaType', message);
}

/**
 * 415 for a PATCH whose `Content-Type` the type does not take (`handlers/patch.go`,
 * `negotiation.NewUnsupportedMediaTypeError`): built-in types list JSON, merge, strategic merge and
 * apply patches (`endpoints/installer.go`); custom resources have no strategic merge patch
 * (apiextensions-apiserver's `crdHandler`).
 */
export function unsupportedPatchTypeError(type: ResourceType): KinformerError {
  const accepted = type.customResource
    ? ['application/json-patch+json', 'application/merge-patch+json', 'application/apply-patch+yaml']
    : [
        'application/json-patch+json',
        'application/merge-patch+json',
        'application/strategic-merge-patch+json',
        'application/apply-patch+yaml',
      ];
  return unsupportedMediaTypeError(
    `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
  );
}
