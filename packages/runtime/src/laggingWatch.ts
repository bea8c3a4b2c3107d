import type { KubeObject } from '@kinformer/core';
import type { ListerWatcher, WatchEvent } from '@kinformer/reflector';

/**
 * `listerWatcher` with every watch event delivered `lagMs` after it arrived, in order (lists are not
 * delayed): what a controller sees when kube-apiserver's watch cache runs behind under load. For
 * tests of read-your-writes and of controllers that must not trust a fresh-looking cache.
 */
export function laggingWatch<T extends KubeObject>(
  listerWatcher: ListerWatcher<T>,
  lagMs: number,
): ListerWatcher<T> {
  return {
    list: (options, context) => listerWatcher.list(options, context),
    watch: async (options, context) => delayed(await listerWatcher.watch(options, context), lagMs),
  };
}

async function* delayed<T>(
  inner: AsyncIterable<WatchEvent<T>>,
  lagMs: number,
): AsyncGenerator<WatchEvent<T>> {
  const buffer: Array<{ event: WatchEvent<T>; due: number }> = [];
  let finished = false;
  let failure: unknown = undefined;
  let wake: (() => void) | undefined;
  void (async () => {
    try {
      for await (const event of inner) {
        buffer.push({ event, due: Date.now() + lagMs });
        wake?.();
      }
    } catch (err) {
      failure = err;
    }
    finished = true;
    wake?.();
  })();
  for (;;) {
    const next = buffer[0];
    if (next !== undefined) {
      const wait = next.due - Date.now();
      if (wait > 0) {
        await new Promise((resolve) => setTimeout(resolve, wait));
        continue;
      }
      buffer.shift();
      yield next.event;
      continue;
    }
    if (finished) {
      if (failure !== undefined)
        throw failure instanceof Error ? failure : new Error('watch failed', { cause: failure });
      return;
    }
    await new Promise<void>((resolve) => (wake = resolve));
    wake = undefined;
  }
}
