import { parseShardSelector, type KubeList, type KubeObject, type ShardSelector } from '@kinformer/core';
import type { ListerWatcher, ListOptions, RequestContext } from './listerWatcher.js';
import type { WatchEvent, WatchOptions } from './listerWatcher.js';
import type { ReflectorStats } from './reflectorOptions.js';

/**
 * Which side filters a sharded reflector's objects: `server` once a LIST came back with
 * `metadata.shardInfo.selector` equal to the selector sent (KEP-5866, the server filtered), `client`
 * otherwise (an older server, the gate off, or no LIST yet: a streaming list carries no ListMeta).
 */
export type ShardFilterMode = 'server' | 'client';

/** The selector of `ReflectorOptions.shardSelector`, parsed once (throws `ERR_INVALID_SELECTOR`). */
export function toShardSelector(selector: string | ShardSelector): ShardSelector {
  return typeof selector === 'string' ? parseShardSelector(selector) : selector;
}

/**
 * Wraps a ListerWatcher for `ReflectorOptions.shardSelector`: sends `shardSelector` on every LIST,
 * WATCH and streaming list, and filters what comes back with the same hash and ranges, whatever the
 * server did. When the server filtered (the LIST's `shardInfo` echoes the selector) the client filter
 * drops nothing and costs one FNV-1a hash per object; when it ignored the parameter, the client filter
 * keeps the store to the range (the KEP's rollback advice: "fall back to client-side filtering").
 * An object's uid and namespace never change, so an object never moves in or out of a range: dropping
 * its events is enough, no synthetic delete is needed.
 */
export class ShardFilteringListerWatcher<T extends KubeObject> implements ListerWatcher<T> {
  readonly watchListSupported?: boolean;
  readonly #inner: ListerWatcher<T>;
  readonly #selector: ShardSelector;
  readonly #wire: string;
  readonly #counters: ReflectorStats;

  constructor(inner: ListerWatcher<T>, selector: ShardSelector, counters: ReflectorStats) {
    this.#inner = inner;
    this.#selector = selector;
    this.#wire = selector.toString();
    this.#counters = counters;
    if (inner.watchListSupported !== undefined) this.watchListSupported = inner.watchListSupported;
    counters.shardFilterMode ??= 'client';
  }

  async list(options: ListOptions, context: RequestContext): Promise<KubeList<T>> {
    const list = await this.#inner.list({ ...options, shardSelector: this.#wire }, context);
    const echoed = list.metadata?.shardInfo?.selector;
    const honoured = echoed !== undefined && sameSelector(echoed, this.#wire);
    this.#counters.shardFilterMode = honoured ? 'server' : 'client';
    const items = list.items;
    const selector = this.#selector;
    // The server filtered (or every object is in range): the page as it came, no copy.
    let first = 0;
    while (first < items.length && selector.matches(items[first] as T)) first++;
    if (first === items.length) return list;
    const kept = items.slice(0, first);
    for (let i = first + 1; i < items.length; i++) {
      const item = items[i] as T;
      if (selector.matches(item)) kept.push(item);
    }
    this.#counters.shardDropped += items.length - kept.length;
    return { ...list, items: kept };
  }

  async watch(options: WatchOptions, context: RequestContext): Promise<AsyncIterable<WatchEvent<T>>> {
    const stream = await this.#inner.watch({ ...options, shardSelector: this.#wire }, context);
    const selector = this.#selector;
    const counters = this.#counters;
    return {
      [Symbol.asyncIterator]: () => {
        const it = stream[Symbol.asyncIterator]();
        return {
          async next(): Promise<IteratorResult<WatchEvent<T>>> {
            for (;;) {
              const r = await it.next();
              if (r.done === true || r.value.type === 'BOOKMARK' || selector.matches(r.value.object))
                return r;
              counters.shardDropped++;
            }
          },
          async return(value?: unknown): Promise<IteratorResult<WatchEvent<T>>> {
            if (it.return) return it.return(value);
            return { done: true, value: undefined };
          },
        };
      },
    };
  }
}

function sameSelector(echoed: string, sent: string): boolean {
  if (echoed === sent) return true;
  try {
    return parseShardSelector(echoed).toString() === sent;
  } catch {
    return false;
  }
}
