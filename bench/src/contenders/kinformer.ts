/**
 * kinformer: a SharedIndexInformer through the SharedInformerFactory and @kinformer/client-node's
 * createListWatch (the factory's default), with its namespace index and one handler — the way the
 * README shows it. The ListerWatcher is wrapped only to learn when a relist's LIST has finished.
 */
import { createListWatch } from '@kinformer/client-node';
import { SharedInformerFactory } from '@kinformer/informer';
import type { KubeObject } from '@kinformer/core';
import type { ListerWatcher } from '@kinformer/reflector';
import { KubeConfig, type V1Pod } from '@kubernetes/client-node';
import type { Contender } from './types.js';

export function kinformer(serverUrl: string): Contender {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'bench', server: serverUrl, skipTLSVerify: true }],
    users: [{ name: 'bench' }],
    contexts: [{ name: 'bench', cluster: 'bench', user: 'bench' }],
    currentContext: 'bench',
  });
  let listsDone = 0;
  let relistWaiter: (() => void) | undefined;
  const factory = new SharedInformerFactory(kc, {
    listerWatcherFactory: (gvr, request) => {
      const lw: ListerWatcher<KubeObject> = createListWatch(kc, { ...gvr, ...(request.namespace ? { namespace: request.namespace } : {}) });
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
  const { informer } = factory.core.v1.pods();
  let onEvent: () => void = () => {};
  informer.addEventHandler({
    onAdd: () => {},
    onUpdate: (_old: V1Pod, _new: V1Pod) => onEvent(),
  });
  const stop = new AbortController();
  return {
    async start() {
      factory.start(stop.signal);
      await factory.waitForCacheSync(stop.signal);
    },
    size: () => informer.getStore().size(),
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
