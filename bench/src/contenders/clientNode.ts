/**
 * `@kubernetes/client-node`'s `makeInformer`, used the way its README shows: a list function from
 * the generated CoreV1Api and an `update` handler.
 */
import { CoreV1Api, makeInformer, type V1Pod } from '@kubernetes/client-node';
import { benchKubeConfig } from '../benchKubeConfig.js';
import type { Contender } from './types.js';

export function clientNode(serverUrl: string): Contender {
  const kc = benchKubeConfig(serverUrl);
  const api = kc.makeApiClient(CoreV1Api);
  let relistWaiter: (() => void) | undefined;
  let lists = 0;
  const listFn = async () => {
    const list = await api.listPodForAllNamespaces();
    lists++;
    if (lists > 1 && relistWaiter) {
      const w = relistWaiter;
      relistWaiter = undefined;
      setImmediate(w);
    }
    return list;
  };
  const informer = makeInformer<V1Pod>(kc, '/api/v1/pods', listFn);
  return {
    // makeInformer reports a failed LIST on 'error' and start() resolves anyway: fail the start then.
    start: () =>
      new Promise<void>((resolve, reject) => {
        let failed = false;
        informer.on('error', (err: unknown) => {
          if (lists > 0) return;
          failed = true;
          reject(err instanceof Error ? err : new Error(String(err)));
        });
        informer.start().then(() => {
          if (!failed) resolve();
        }, reject);
      }),
    size: () => informer.list().length,
    onEvent(cb) {
      informer.on('update', cb);
      informer.on('add', () => {});
    },
    nextRelist() {
      return new Promise((resolve) => {
        relistWaiter = resolve;
      });
    },
    stop: () => informer.stop(),
  };
}
