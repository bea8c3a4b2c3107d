/**
 * kinformer: a SharedIndexInformer through the SharedInformerFactory and @kinformer/client-node's
 * createListWatch (the factory's default), with its namespace index and one handler — the way the
 * README shows it. The ListerWatcher is wrapped only to learn when a relist's LIST has finished.
 */
import { createListWatch } from '@kinformer/client-node';
import { dropManagedFields, SharedInformerFactory, type SharedIndexInformer } from 'kinformer';
import type { KubeObject } from '@kinformer/core';
import type { ListerWatcher } from '@kinformer/reflector';
import { benchKubeConfig } from '../benchKubeConfig.js';
import type { Contender } from './types.js';

/** The memory levers a variant turns on. */
export interface KinformerVariant {
  /** `dropManagedFields` as the factory's transform. */
  transform?: boolean;
  /** A metadata-only informer (`PartialObjectMetadata`). */
  metadataOnly?: boolean;
  /** A label selector (the bench server understands `tier=frontend`: a third of the pods). */
  labelSelector?: string;
  /** Page every LIST, relists included (client-go's `WatchListPageSize`). */
  pagedRelists?: boolean;
  /**
   * Do not keep the cached object for a list item at the same resourceVersion. The factory does keep
   * it by default (`reuseListItem` fed by the informer's cache): this variant shows what that saves.
   */
  noReuse?: boolean;
}

export function kinformer(serverUrl: string): Contender {
  return kinformerWith(serverUrl, {});
}

export const kinformerTransform = (url: string): Contender => kinformerWith(url, { transform: true });
export const kinformerMetadata = (url: string): Contender => kinformerWith(url, { metadataOnly: true });
export const kinformerSelector = (url: string): Contender =>
  kinformerWith(url, { labelSelector: 'tier=frontend' });
export const kinformerPaged = (url: string): Contender => kinformerWith(url, { pagedRelists: true });
export const kinformerNoReuse = (url: string): Contender => kinformerWith(url, { noReuse: true });

/** The cached object when it is at the list item's resourceVersion, else the item (what the factory does). */
function cachedIfUnchanged(cached: (key: string) => KubeObject | undefined, item: KubeObject): KubeObject {
  const m = item.metadata;
  const old = cached(m?.namespace ? `${m.namespace}/${m.name ?? ''}` : (m?.name ?? ''));
  return old !== undefined && old.metadata?.resourceVersion === m?.resourceVersion ? old : item;
}

function kinformerWith(serverUrl: string, variant: KinformerVariant): Contender {
  const kc = benchKubeConfig(serverUrl);
  let listsDone = 0;
  let relistWaiter: (() => void) | undefined;
  const factory = new SharedInformerFactory(kc, {
    ...(variant.transform ? { transform: dropManagedFields } : {}),
    ...(variant.pagedRelists ? { reflectorOptions: () => ({ pageSize: 500 }) } : {}),
    listerWatcherFactory: (gvr, request) => {
      const lw: ListerWatcher<KubeObject> = createListWatch(
        kc,
        { ...gvr, ...(request.namespace ? { namespace: request.namespace } : {}) },
        {
          ...(request.labelSelector ? { labelSelector: request.labelSelector } : {}),
          ...(request.metadataOnly ? { metadataOnly: true } : {}),
          ...(variant.noReuse || request.cached === undefined
            ? {}
            : { reuseListItem: (o: KubeObject) => cachedIfUnchanged(request.cached!, o) }),
        },
      );
      return {
        watch: (o, c) => lw.watch(o, c),
        list: async (o, c) => {
          const page = await lw.list(o, c);
          if (!page.metadata?.continue) {
            listsDone++;
            if (listsDone > 1 && relistWaiter) {
              const w = relistWaiter;
              relistWaiter = undefined;
              // The LIST is in; the relist is done once the informer has drained it into the cache.
              const drained = (): void => {
                if (informer.stats().queueDepth === 0) w();
                else setImmediate(drained);
              };
              setImmediate(drained);
            }
          }
          return page;
        },
      };
    },
  });
  const informer = (
    variant.metadataOnly
      ? factory.forResource({ version: 'v1', resource: 'pods' }, { metadataOnly: true }).informer
      : factory.core.v1.pods(variant.labelSelector ? { labelSelector: variant.labelSelector } : {}).informer
  ) as SharedIndexInformer<KubeObject>;
  let onEvent: () => void = () => {};
  informer.addEventHandler({
    onAdd: () => {},
    onUpdate: (_old: KubeObject, _new: KubeObject) => onEvent(),
  });
  const stop = new AbortController();
  return {
    async start() {
      factory.start(stop.signal);
      await factory.waitForCacheSync(stop.signal);
    },
    size: () => informer.getStore().size(),
    ...(variant.labelSelector ? { expectedSize: (pods: number) => Math.ceil(pods / 3) } : {}),
    onEvent(cb) {
      onEvent = cb;
    },
    nextRelist() {
      return new Promise((resolve) => {
        relistWaiter = resolve;
      });
    },
    async stop() {
      stop.abort();
      await factory.shutdown();
    },
  };
}
