import { deletionHandlingMetaNamespaceKeyFunc, ErrorCodes, KinformerError } from '@kinformer/core';
import type { GroupVersionResource, KubeObject, Logger } from '@kinformer/core';
import type { ListerWatcher } from '@kinformer/reflector';
import type { KubeConfig } from '@kubernetes/client-node';
import { createListWatch } from './createListWatch.js';

/** What an informer factory asks for (structurally `@kinformer/informer`'s `ListerWatcherRequest`). */
export interface KubeConfigListerWatcherRequest {
  /** `''`: all namespaces. */
  namespace: string;
  metadataOnly: boolean;
  labelSelector?: string;
  fieldSelector?: string;
  /** The informer's cached object of a key, for reusing unchanged list items on a relist. */
  cached?: (key: string) => KubeObject | undefined;
}

/**
 * The ListerWatchers of an informer factory over `createListWatch(kubeConfig, …)`, with the request's
 * namespace and selectors (what `kinformer`'s `SharedInformerFactory` and `@kinformer/runtime`'s
 * Manager use). A relist keeps the cached object for every item the server did not change (same
 * resourceVersion). Throws `ERR_INVALID_OPTION` without a KubeConfig.
 */
export function kubeConfigListerWatchers(
  kubeConfig: KubeConfig | undefined,
  logger?: Logger,
): (gvr: GroupVersionResource, request: KubeConfigListerWatcherRequest) => ListerWatcher<KubeObject> {
  if (kubeConfig === undefined) {
    throw new KinformerError(
      ErrorCodes.INVALID_OPTION,
      'SharedInformerFactory needs a KubeConfig or a listerWatcherFactory',
    );
  }
  return (gvr, request) =>
    createListWatch(
      kubeConfig,
      {
        ...(gvr.group === undefined || gvr.group === '' ? {} : { group: gvr.group }),
        version: gvr.version,
        resource: gvr.resource,
        ...(request.namespace === '' ? {} : { namespace: request.namespace }),
      },
      {
        ...(request.labelSelector === undefined ? {} : { labelSelector: request.labelSelector }),
        ...(request.fieldSelector === undefined ? {} : { fieldSelector: request.fieldSelector }),
        metadataOnly: request.metadataOnly,
        ...(request.cached === undefined ? {} : { reuseListItem: reuseCached(request.cached) }),
        ...(logger === undefined ? {} : { logger }),
      },
    );
}

/**
 * A relist keeps the cached object for every item the server did not change (same resourceVersion):
 * the parsed copy becomes garbage at once, so a relist holds the changed objects twice, not all of them.
 */
function reuseCached(cached: (key: string) => KubeObject | undefined): (item: KubeObject) => KubeObject {
  return (item) => {
    const rv = item.metadata?.resourceVersion;
    if (rv === undefined || rv === '') return item;
    let key: string;
    try {
      key = deletionHandlingMetaNamespaceKeyFunc(item);
    } catch {
      return item; // no name: the queue reports it
    }
    const old = cached(key);
    return old !== undefined && old.metadata?.resourceVersion === rv ? old : item;
  };
}
