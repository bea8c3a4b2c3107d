import { ErrorCodes, KinformerError } from '@kinformer/core';
import type { ListOptions, WatchOptions } from '@kinformer/reflector';

/**
 * The resource a ListerWatcher lists and watches: any group/version/resource, built-in or CRD.
 * `group` is `''` or omitted for the core group (`/api/v1`). `namespace` scopes the requests to one
 * namespace; omitted or `''` means all namespaces (and is what cluster-scoped resources use).
 */
export interface ApiResource {
  group?: string;
  version: string;
  resource: string;
  namespace?: string;
}

const SEGMENT = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** Throws `ERR_INVALID_OPTION` unless every part of `resource` is a valid, non-empty path segment. */
export function validateApiResource(resource: ApiResource): void {
  const check = (name: string, value: string | undefined, required: boolean): void => {
    if (value === undefined || value === '') {
      if (required)
        throw new KinformerError(ErrorCodes.INVALID_OPTION, `createListWatch: ${name} is required`);
      return;
    }
    if (typeof value !== 'string' || !SEGMENT.test(value)) {
      throw new KinformerError(
        ErrorCodes.INVALID_OPTION,
        `createListWatch: ${name} ${JSON.stringify(value)} is not a valid path segment`,
      );
    }
  };
  check('version', resource.version, true);
  check('resource', resource.resource, true);
  check('group', resource.group, false);
  check('namespace', resource.namespace, false);
}

/**
 * The collection path of a resource: `/api/v1[/namespaces/{ns}]/{resource}` for the core group,
 * `/apis/{group}/{version}[/namespaces/{ns}]/{resource}` for every other group (CRDs included).
 */
export function collectionPath(resource: ApiResource): string {
  const prefix = resource.group ? `/apis/${resource.group}/${resource.version}` : `/api/${resource.version}`;
  const ns = resource.namespace ? `/namespaces/${resource.namespace}` : '';
  return `${prefix}${ns}/${resource.resource}`;
}

/** Selectors fixed for the lifetime of a ListerWatcher, already in their wire form (empty = absent). */
export interface WireSelectors {
  labelSelector: string;
  fieldSelector: string;
}

function add(query: string, key: string, value: string): string {
  return `${query}${query === '' ? '?' : '&'}${key}=${encodeURIComponent(value)}`;
}

/**
 * The query string (with its leading `?`, or `''`) of a LIST. Parameters are in key order, as
 * client-go's `url.Values.Encode` writes them; empty strings and a zero `limit` are left out as
 * client-go's `omitempty` does.
 */
export function listQuery(options: ListOptions, selectors: WireSelectors): string {
  let q = '';
  if (options.continue) q = add(q, 'continue', options.continue);
  if (selectors.fieldSelector) q = add(q, 'fieldSelector', selectors.fieldSelector);
  if (selectors.labelSelector) q = add(q, 'labelSelector', selectors.labelSelector);
  if (options.limit !== undefined && options.limit > 0)
    q = add(q, 'limit', String(Math.trunc(options.limit)));
  if (options.resourceVersion) q = add(q, 'resourceVersion', options.resourceVersion);
  if (options.resourceVersionMatch) q = add(q, 'resourceVersionMatch', options.resourceVersionMatch);
  if (options.shardSelector) q = add(q, 'shardSelector', options.shardSelector);
  if (options.timeoutSeconds !== undefined)
    q = add(q, 'timeoutSeconds', String(Math.trunc(options.timeoutSeconds)));
  return q;
}

/**
 * The query string of a WATCH: `watch=true` plus the options, in key order. `allowWatchBookmarks`
 * is sent only when true; `sendInitialEvents` whenever it is set (`false` means something different
 * from absent, §4.3).
 */
export function watchQuery(options: WatchOptions, selectors: WireSelectors): string {
  let q = '';
  if (options.allowWatchBookmarks === true) q = add(q, 'allowWatchBookmarks', 'true');
  if (selectors.fieldSelector) q = add(q, 'fieldSelector', selectors.fieldSelector);
  if (selectors.labelSelector) q = add(q, 'labelSelector', selectors.labelSelector);
  if (options.resourceVersion) q = add(q, 'resourceVersion', options.resourceVersion);
  if (options.resourceVersionMatch) q = add(q, 'resourceVersionMatch', options.resourceVersionMatch);
  if (options.sendInitialEvents !== undefined)
    q = add(q, 'sendInitialEvents', String(options.sendInitialEvents));
  if (options.shardSelector) q = add(q, 'shardSelector', options.shardSelector);
  if (options.timeoutSeconds !== undefined)
    q = add(q, 'timeoutSeconds', String(Math.trunc(options.timeoutSeconds)));
  return add(q, 'watch', 'true');
}
