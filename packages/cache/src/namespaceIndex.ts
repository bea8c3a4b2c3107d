import { ErrorCodes, KinformerError } from '@kinformer/core';
import { hasObjectMeta } from '@kinformer/core/internal';
import type { KeyFunc, KubeObject } from '@kinformer/core';
import type { IndexFunc } from './store.js';

/** The conventional name of the namespace index (client-go's `NamespaceIndex`). Listers use it. */
export const NAMESPACE_INDEX = 'namespace';

/**
 * client-go's `MetaNamespaceIndexFunc`: indexes an object by `metadata.namespace`, `''` for a
 * cluster-scoped object. Returns a new one-element array. Throws `ERR_INDEX_FUNC` for an object
 * without `metadata` (the store then rejects the write and stays unchanged).
 */
export function metaNamespaceIndexFunc(obj: KubeObject): string[] {
  if (!hasObjectMeta(obj)) {
    throw new KinformerError(ErrorCodes.INDEX_FUNC, 'object has no meta: cannot index it by namespace', {
      details: { kind: typeof obj === 'object' && obj !== null ? obj.kind : typeof obj },
    });
  }
  return [obj.metadata.namespace ?? ''];
}

/**
 * client-go's `IndexFuncToKeyFuncAdapter`: turns an index function that yields exactly one value per
 * object into a key function. The key function throws `ERR_KEY_FUNC` when there are zero or several
 * values (and lets the index function's own errors through).
 */
export function indexFuncToKeyFuncAdapter<T>(indexFunc: IndexFunc<T>): KeyFunc<T> {
  return (obj: T): string => {
    const values = indexFunc(obj);
    if (values.length !== 1) {
      const reason =
        values.length === 0 ? 'unexpected empty index values' : `too many keys: ${values.join(', ')}`;
      throw new KinformerError(ErrorCodes.KEY_FUNC, `index function cannot be a key function: ${reason}`, {
        details: { values: values.length },
      });
    }
    return values[0]!;
  };
}
