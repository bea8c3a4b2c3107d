import { newIndexer, newStore } from '@kinformer/cache';
import type { Indexer, Indexers, Store } from '@kinformer/cache';
import { deletionHandlingMetaNamespaceKeyFunc } from '@kinformer/core';
import type { Clock, KeyFunc, KubeObject, Logger } from '@kinformer/core';
import { definedProps } from '@kinformer/core/internal';
import { AtomicFIFO, DeltaFIFO, RealFIFO } from '@kinformer/delta-fifo';
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
  /**
   * With the `RealFIFO`: atomic relists and resyncs (client-go 1.36's `AtomicFIFO`, the default): a
   * relist is applied to the store in one step, so readers never see half of it, and the store's
   * resourceVersion is then the list's. `false`: the non-atomic mode (one delta per object).
   * Ignored with the `DeltaFIFO`.
   */
  atomicEvents?: boolean;
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
    ...definedProps({
      fullResyncPeriodMs: options.resyncPeriodMs,
      objectType: options.objectType,
      name: options.name,
      clock: options.clock,
      logger: options.logger,
      watchErrorHandler: options.watchErrorHandler,
      reflectorOptions: options.reflectorOptions,
    }),
  });
}

/** Options of {@link newInformerQueue}. */
export interface InformerQueueOptions<T> {
  transform?: TransformFunc<T>;
  /** With `'RealFIFO'`: atomic mode (default true, as client-go 1.36); ignored with `'DeltaFIFO'`. */
  atomicEvents?: boolean;
  name?: string;
  clock?: Clock;
  logger?: Logger;
}

/**
 * The queue of an informer whose cache is `store` (client-go's `newQueueFIFO`): by default an
 * `AtomicFIFO` with bookmarks (`ReplacedAll`/`SyncAll`/`Bookmark` deltas, which `processDeltas`
 * reconciles against the store); with `atomicEvents: false` a `RealFIFO`
 * seeing the store as its `knownObjects`; or a `DeltaFIFO` emitting `Replaced` deltas (also seeing
 * the store). Either way relists detect deletions and resyncs re-deliver cached objects.
 */
export function newInformerQueue<T extends KubeObject>(
  kind: QueueKind,
  store: Store<T>,
  options: InformerQueueOptions<T> = {},
): Queue<T> {
  return newQueue(kind, store, options);
}

function newQueue<T extends KubeObject>(
  kind: QueueKind,
  store: Store<T>,
  options: InformerQueueOptions<T>,
): Queue<T> {
  const atomic = kind === 'RealFIFO' && (options.atomicEvents ?? true);
  const queueName = atomic ? 'AtomicFIFO' : kind;
  const common = {
    keyFunction: keyFunc<T>(),
    ...definedProps({
      transformer: options.transform,
      name: options.name === undefined ? undefined : `${queueName} ${options.name}`,
      clock: options.clock,
      logger: options.logger,
    }),
  };
  if (atomic) return new AtomicFIFO<T>({ ...common, emitDeltaTypeBookmark: true });
  return kind === 'DeltaFIFO'
    ? new DeltaFIFO<T>({ ...common, knownObjects: store, emitDeltaTypeReplaced: true })
    : new RealFIFO<T>({ ...common, knownObjects: store });
}
