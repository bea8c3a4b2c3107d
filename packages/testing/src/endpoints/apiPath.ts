import type { RequestVerb } from '../faults/faults.js';
import type { ResourceRegistry, ResourceType } from '../registry/resourceRegistry.js';

/** A request path, resolved against the registered types (`/api/v1/namespaces/{ns}/pods/{name}/status`). */
export type ApiPath =
  | {
      kind: 'discovery';
      document: 'api' | 'apiVersion' | 'apis' | 'group' | 'groupVersion' | 'version' | 'health';
      group: string;
      version: string;
    }
  | {
      kind: 'resource';
      type: ResourceType;
      /** The namespace of a namespaced path (undefined for all namespaces and cluster-scoped types). */
      namespace: string | undefined;
      name: string | undefined;
      subresource: string | undefined;
      /** The deprecated `/watch/` path form. */
      forceWatch: boolean;
    }
  /** Inside a served group/version, but no route there: kube-apiserver's JSON 404 Status. */
  | { kind: 'notFound' }
  /** Outside every served group/version: Go's plain-text `404 page not found`. */
  | { kind: 'unknown' };

const UNKNOWN: ApiPath = { kind: 'unknown' };
const NOT_FOUND: ApiPath = { kind: 'notFound' };
/** Whether `type` serves `subresource` (`status`, `scale`): a route that does not exist is a 404. */
function serves(type: ResourceType, subresource: string): boolean {
  if (subresource === 'status') return type.subresources.status;
  return subresource === 'scale' && type.subresources.scale !== undefined;
}

function segmentsOf(pathname: string): string[] | undefined {
  try {
    return pathname
      .split('/')
      .filter((s) => s !== '')
      .map((s) => decodeURIComponent(s));
  } catch {
    return undefined;
  }
}

function resourcePath(registry: ResourceRegistry, group: string, version: string, rest: string[]): ApiPath {
  let forceWatch = false;
  if (rest[0] === 'watch') {
    forceWatch = true;
    rest = rest.slice(1);
  }
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    const type = registry.lookup(group, version, rest[2]!);
    if (type?.namespaced) {
      if (rest.length > 5) return NOT_FOUND;
      const subresource = rest[4];
      if (subresource !== undefined && (forceWatch || !serves(type, subresource))) return NOT_FOUND;
      return { kind: 'resource', type, namespace: rest[1], name: rest[3], subresource, forceWatch };
    }
  }
  const first = rest[0];
  if (first === undefined) return NOT_FOUND;
  const type = registry.lookup(group, version, first);
  if (!type) return NOT_FOUND;
  if (type.namespaced) {
    return rest.length === 1
      ? { kind: 'resource', type, namespace: undefined, name: undefined, subresource: undefined, forceWatch }
      : NOT_FOUND;
  }
  if (rest.length > 3) return NOT_FOUND;
  const subresource = rest[2];
  if (subresource !== undefined && (forceWatch || !serves(type, subresource))) return NOT_FOUND;
  return { kind: 'resource', type, namespace: undefined, name: rest[1], subresource, forceWatch };
}

/**
 * Resolves a request path. A path outside every served group/version is `unknown` (go-restful never
 * sees it: the not-found handler answers plain text); a miss inside a served group/version
 * (`/api/v1/foos`, `/apis/apps/v1/namespaces/x/foos`, an unknown subresource) is `notFound`, which
 * go-restful's service error handler answers with a JSON Status (`server/handler.go`).
 */
export function parseApiPath(pathname: string, registry: ResourceRegistry): ApiPath {
  const segments = segmentsOf(pathname);
  if (!segments) return UNKNOWN;
  const [root, a, b] = segments;
  const discovery = (
    document: Extract<ApiPath, { kind: 'discovery' }>['document'],
    group = '',
    version = '',
  ): ApiPath => ({
    kind: 'discovery',
    document,
    group,
    version,
  });
  if (root === 'version' && segments.length === 1) return discovery('version');
  if ((root === 'healthz' || root === 'readyz' || root === 'livez') && segments.length === 1)
    return discovery('health');
  if (root === 'api') {
    if (a === undefined) return discovery('api');
    if (segments.length === 2)
      return registry.hasGroupVersion('', a) ? discovery('apiVersion', '', a) : UNKNOWN;
    return registry.hasGroupVersion('', a) ? resourcePath(registry, '', a, segments.slice(2)) : UNKNOWN;
  }
  if (root === 'apis') {
    if (a === undefined) return discovery('apis');
    if (b === undefined) return discovery('group', a);
    if (segments.length === 3)
      return registry.hasGroupVersion(a, b) ? discovery('groupVersion', a, b) : UNKNOWN;
    return registry.hasGroupVersion(a, b) ? resourcePath(registry, a, b, segments.slice(3)) : UNKNOWN;
  }
  return UNKNOWN;
}

/** The verb of a request on a resource path (undefined: method not allowed there). */
export function verbOf(
  method: string,
  path: Extract<ApiPath, { kind: 'resource' }>,
  watchParam: boolean,
): RequestVerb | undefined {
  const named = path.name !== undefined;
  switch (method) {
    case 'GET':
      if (path.forceWatch || (watchParam && path.subresource === undefined)) return 'watch';
      return named ? 'get' : 'list';
    case 'POST':
      return named ? undefined : 'create';
    case 'PUT':
      return named ? 'update' : undefined;
    case 'PATCH':
      return named ? 'patch' : undefined;
    case 'DELETE':
      return named ? (path.subresource === undefined ? 'delete' : undefined) : 'deletecollection';
    default:
      return undefined;
  }
}
