import { DeletedFinalStateUnknown } from './deletedFinalStateUnknown.js';
import { ErrorCodes, KinformerError } from './errors.js';
import type { KubeObject } from './types.js';

/** Computes the store key of an object. Throws a `KinformerError` (`ERR_KEY_FUNC`) when it cannot. */
export type KeyFunc<T = unknown> = (obj: T) => string;

/**
 * An explicit key: a string passed where an object is expected is its own key (client-go's
 * `ExplicitKey`). Lets `store.delete('ns/name')`-style calls work with the default key function.
 */
export type ExplicitKey = string;

/**
 * client-go's `MetaNamespaceKeyFunc`: `namespace/name`, or `name` for cluster-scoped objects.
 * A string is returned as is (an explicit key).
 */
export function metaNamespaceKeyFunc(obj: KubeObject | ExplicitKey): string {
  if (typeof obj === 'string') return obj;
  const meta = typeof obj === 'object' && obj !== null ? obj.metadata : undefined;
  if (typeof meta !== 'object' || meta === null) {
    throw new KinformerError(ErrorCodes.KEY_FUNC, 'object has no meta: cannot compute its key', {
      details: { kind: typeof obj === 'object' && obj !== null ? obj.kind : typeof obj },
    });
  }
  const name = meta.name;
  if (typeof name !== 'string' || name === '') {
    throw new KinformerError(ErrorCodes.KEY_FUNC, 'object has no metadata.name: cannot compute its key', {
      details: { kind: obj.kind, namespace: meta.namespace },
    });
  }
  const ns = meta.namespace;
  return typeof ns === 'string' && ns !== '' ? `${ns}/${name}` : name;
}

/**
 * client-go's `DeletionHandlingMetaNamespaceKeyFunc`: a {@link DeletedFinalStateUnknown} yields its
 * `key`; anything else is keyed by {@link metaNamespaceKeyFunc}.
 */
export function deletionHandlingMetaNamespaceKeyFunc(
  obj: KubeObject | ExplicitKey | DeletedFinalStateUnknown<unknown>,
): string {
  if (obj instanceof DeletedFinalStateUnknown) return obj.key;
  return metaNamespaceKeyFunc(obj);
}

/**
 * Splits `namespace/name` or `name`. Anything else (more than one `/`, an empty name) throws
 * `ERR_INVALID_KEY` naming the key.
 */
export function splitMetaNamespaceKey(key: string): { namespace?: string; name: string } {
  const slash = key.indexOf('/');
  if (slash === -1) {
    if (key === '') throw invalidKey(key, 0);
    return { name: key };
  }
  if (key.indexOf('/', slash + 1) !== -1) throw invalidKey(key, key.indexOf('/', slash + 1));
  const namespace = key.slice(0, slash);
  const name = key.slice(slash + 1);
  if (name === '') throw invalidKey(key, slash + 1);
  return namespace === '' ? { name } : { namespace, name };
}

function invalidKey(key: string, position: number): KinformerError {
  return new KinformerError(
    ErrorCodes.INVALID_KEY,
    `unexpected key format: ${JSON.stringify(key)} (at position ${position}); expected "name" or "namespace/name"`,
    { details: { key, position } },
  );
}
