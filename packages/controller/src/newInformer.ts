import { newIndexer, newStore } from '@kinformer/cache';
import type { Indexer, Indexers, Store } from '@kinformer/cache';
import { deletionHandlingMetaNamespaceKeyFunc } from '@kinformer/core';
import type { Clock, KeyFunc, KubeObject, Logger } from '@kinformer/core';
import { DeltaFIFO, RealFIFO } from '@kinformer/delta-fifo';
import type { Queue, TransformFunc } from '@kinformer/delta-fifo';
import type { ListerWatcher, WatchErrorHandler } from '@kinformer/reflector';
import { Controller } from './controller.js';
import type { ControllerOptions } from './controller.js';
import { processDeltas, processDeltasBatch } from './processDeltas.js';
import type { ResourceEventHandler } from './resourceEventHandler.js';

/** Which queue sits between the reflector and the store. */
export type QueueKind = 'RealFIFO' | 'DeltaFIFO';

/** Options of {@link newInformer}. */
export interface InformerOptions<T extends KubeObject> {
  /** Every this many ms, every handler gets `onUpdate(obj, obj)` for every cached object (0: never). */
  resyncPeriodMs?: number;
  /** Runs on every object before it is stored (see the queue's `TransformFunc`). */
  transform?: TransformFunc<T>;
  /** `'RealFIFO'` (default, client-go 1.36: events in watch order) or `'DeltaFIFO'` (per-key batching). */
  queue?: QueueKind;
  /** The expected `apiVersion`/`kind` (see `ControllerOptions.objectType`). */
  objectType?: ControllerOptions<T>['objectType'];
  /** Deep-freeze stored objects (default: development mode). */
  freeze?: boolean;
  name?: string;
  clock?: Clock;
  logger?: Logger;
  watchErrorHandler?: WatchErrorHandler<T>;
  /** Further reflector options (page size, watch-list, backoff, watch timeout). */
  reflectorOptions?: ControllerOptions<T>['reflectorOptions'];
}

/** Options of {@link newIndexerInformer}. */
export interface IndexerInformerOptions<T extends KubeObject> extends InformerOptions<T> {
  /** Secondary indexes of the returned indexer. */
  indexers: Indexers<T>;
}

/**
 * client-go's `NewInformer`: a store kept in sync with the server and a {@link Controller} that fills
 * it and calls `handler` — synchronously, on the controller's process loop, after the store was
 * written (there is no per-handler buffering: a slow handler delays the next pop; an async handler is
 * awaited before the next event, while the rest of the popped batch is already in the store, see
 * {@link processDeltas}). Objects are keyed by `deletionHandlingMetaNamespaceKeyFunc`.
 * The store is for reading: only the controller writes it. Start it with `controller.run(signal)`;
 * a handler that throws stops it and makes `run` reject (see {@link Controller.run}).
 */
export function newInformer<T extends KubeObject>(
  listerWatcher: ListerWatcher<T>,
  handler: ResourceEventHandler<T>,
  options: InformerOptions<T> = {},
): { store: Store<T>; controller: Controller<T> } {
  const store = newStore<T>(keyFunc<T>(), options.freeze === undefined ? {} : { freeze: options.freeze });
  return { store, controller: buildController(listerWatcher, handler, store, options) };
}

/**
 * client-go's `NewIndexerInformer`: {@link newInformer} with an {@link Indexer} (secondary indexes
 * `options.indexers`) instead of a plain store.
 */
export function newIndexerInformer<T extends KubeObject>(
  listerWatcher: ListerWatcher<T>,
  handler: ResourceEventHandler<T>,
  options: IndexerInformerOptions<T>,
): { indexer: Indexer<T>; controller: Controller<T> } {
  const indexer = newIndexer<T>(
    keyFunc<T>(),
    options.indexers,
    options.freeze === undefined ? {} : { freeze: options.freeze },
  );
  return { indexer, controller: buildController(listerWatcher, handler, indexer, options) };
}

function keyFunc<T>(): KeyFunc<T> {
  return deletionHandlingMetaNamespaceKeyFunc as KeyFunc<T>;
}

function buildController<T extends KubeObject>(
  listerWatcher: ListerWatcher<T>,
  handler: ResourceEventHandler<T>,
  store: Store<T>,
  options: InformerOptions<T>,
): Controller<T> {
  const queue = newQueue(options.queue ?? 'RealFIFO', store, options);
  return new Controller<T>({
    queue,
    listerWatcher,
    process: (deltas, isInInitialList) => processDeltas(handler, store, deltas, isInInitialList),
    processBatch: (batch, isInInitialList) => processDeltasBatch(handler, store, batch, isInInitialList),
    ...(options.resyncPeriodMs === undefined ? {} : { fullResyncPeriodMs: options.resyncPeriodMs }),
    ...(options.objectType === undefined ? {} : { objectType: options.objectType }),
    ...(options.name === undefined ? {} : { name: options.name }),
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...(options.logger === undefined ? {} : { logger: options.logger }),
    ...(options.watchErrorHandler === undefined ? {} : { watchErrorHandler: options.watchErrorHandler }),
    ...(options.reflectorOptions === undefined ? {} : { reflectorOptions: options.reflectorOptions }),
  });
}

/**
 * The queue of an informer whose cache is `knownObjects` (client-go's `newQueueFIFO`, non-atomic
 * mode): a `RealFIFO`, or a `DeltaFIFO` emitting `Replaced` deltas. Both see the cache, so relists
 * detect deletions and resyncs re-deliver cached objects.
 */
export function newInformerQueue<T extends KubeObject>(
  kind: QueueKind,
  knownObjects: Store<T>,
  options: { transform?: TransformFunc<T>; name?: string; clock?: Clock; logger?: Logger } = {},
): Queue<T> {
  return newQueue(kind, knownObjects, options);
}

function newQueue<T extends KubeObject>(
  kind: QueueKind,
  knownObjects: Store<T>,
  options: { transform?: TransformFunc<T>; name?: string; clock?: Clock; logger?: Logger },
): Queue<T> {
  const common = {
    keyFunction: keyFunc<T>(),
    knownObjects,
    ...(options.transform === undefined ? {} : { transformer: options.transform }),
    ...(options.name === undefined ? {} : { name: `${kind} ${options.name}` }),
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...(options.logger === undefined ? {} : { logger: options.logger }),
  };
  return kind === 'DeltaFIFO'
    ? new DeltaFIFO<T>({ ...common, emitDeltaTypeReplaced: true })
    : new RealFIFO<T>(common);
}
