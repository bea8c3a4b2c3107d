/**
 * Watching a custom resource: a typed informer for `widgets.example.com/v1` from
 * `factory.forResource<Widget>(…)`, with add/update/delete handlers, a metadata-only informer on the
 * same resource, and the `dropManagedFields` transform.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { FakeApiServer } from '@kinformer/testing';
import {
  DeletedFinalStateUnknown,
  dropManagedFields,
  metaNamespaceKeyFunc,
  SharedInformerFactory,
} from 'kinformer';
import { widget, WIDGET_DEFINITION, WIDGETS, type Widget } from './widget.js';

/** Options of {@link runWidgets}. */
export interface RunWidgetsOptions {
  /** Watch this cluster (the CRD must be installed: `kubectl apply -f widget-crd.yaml`) until `signal` aborts. */
  kubeConfig?: KubeConfig;
  /** Stops watching a real cluster. Not needed for the embedded server: the example ends by itself. */
  signal?: AbortSignal;
  /** Where the output lines go. Default `console.log`. */
  log?: (line: string) => void;
}

/** What {@link runWidgets} saw. */
export interface RunWidgetsResult {
  /** What the handlers were told, in order: `add default/blue (initial list)`, `update …`, `delete …`. */
  events: string[];
  /** The full informer's cache at the end: `namespace/name color size`, and whether managedFields survived. */
  widgets: Array<{ key: string; color: string; size: number; managedFields: boolean }>;
  /** The metadata-only informer's cache at the end. */
  metadata: Array<{
    key: string;
    kind: string | undefined;
    labels: Record<string, string>;
    hasSpec: boolean;
  }>;
}

/**
 * Runs the example. Against the embedded server: registers the Widget type, seeds two widgets,
 * syncs both informers, then creates, updates and deletes a widget and returns once the handlers have
 * seen every change. Against a real cluster: prints the widgets and their changes until `signal` aborts.
 */
export async function runWidgets(options: RunWidgetsOptions = {}): Promise<RunWidgetsResult> {
  const log = options.log ?? console.log;
  let server: FakeApiServer | undefined;
  if (options.kubeConfig === undefined) {
    server = await FakeApiServer.start();
    server.registerResource(WIDGET_DEFINITION);
    server.create(WIDGETS, widget('default', 'blue', 'blue', 1));
    server.create(WIDGETS, widget('default', 'red', 'red', 5));
  }
  const kubeConfig = options.kubeConfig ?? server!.kubeConfig();

  // Every informer of this factory drops managedFields before caching (a memory lever). For a single
  // informer, call `informer.setTransform(dropManagedFields)` before starting it instead.
  const factory = new SharedInformerFactory(kubeConfig, { transform: dropManagedFields });
  const stop = new AbortController();
  const onAbort = (): void => stop.abort();
  options.signal?.addEventListener('abort', onAbort, { once: true });

  try {
    // 1. The typed informer: `T` is only a compile-time promise about what the server sends.
    const { informer, lister } = factory.forResource<Widget>(WIDGETS);
    const events: string[] = [];
    let deletesSeen = 0; // by the typed and the metadata-only informer
    informer.addEventHandler({
      onAdd(w, isInInitialList) {
        const line = `add ${metaNamespaceKeyFunc(w)} ${w.spec.color} size ${w.spec.size}${isInInitialList ? ' (initial list)' : ''}`;
        events.push(line);
        log(line);
      },
      onUpdate(oldW, newW) {
        // A resync (or a relist of an unchanged object) delivers old === new: nothing to do then.
        if (oldW.metadata?.resourceVersion === newW.metadata?.resourceVersion) return;
        const line = `update ${metaNamespaceKeyFunc(newW)} size ${oldW.spec.size} → ${newW.spec.size}`;
        events.push(line);
        log(line);
      },
      // Handlers may be async: the next event for this handler waits for the promise.
      async onDelete(obj) {
        // After a missed delete (the watch was down), the informer hands a tombstone with the last state seen.
        const w = obj instanceof DeletedFinalStateUnknown ? obj.obj : obj;
        const line = `delete ${metaNamespaceKeyFunc(w)}${obj instanceof DeletedFinalStateUnknown ? ' (tombstone)' : ''}`;
        events.push(line);
        log(line);
        await Promise.resolve(); // e.g. clean up something outside the cluster
        deletesSeen++;
      },
    });

    // 2. A metadata-only informer of the same resource: a separate informer (and list/watch) that
    //    caches PartialObjectMetadata, for code that needs names, labels or owners but never the spec.
    const meta = factory.forResource(WIDGETS, { metadataOnly: true });
    meta.informer.on('delete', () => void deletesSeen++);

    factory.start(stop.signal);
    const synced = await factory.waitForCacheSync(stop.signal);
    log(`synced: ${[...synced].map(([key, ok]) => `${key} ${ok ? '✓' : '✗'}`).join(', ')}`);

    if (server) {
      // 3. Change things on the server; the handlers see each change.
      server.create(WIDGETS, widget('default', 'green', 'green', 2));
      server.patch(WIDGETS, 'default/blue', { spec: { size: 3 } });
      server.delete(WIDGETS, 'default/red');
      // One handler's events arrive in order: once it has seen the last change, it has seen them all.
      await server.waitFor(() => deletesSeen === 2); // at most 5 s: the delete of default/red
    } else {
      await new Promise<void>((resolve) => {
        if (stop.signal.aborted) resolve();
        else stop.signal.addEventListener('abort', () => resolve(), { once: true });
      });
    }

    const result: RunWidgetsResult = {
      events,
      // The lister reads the cache: no request to the server.
      widgets: lister.list().map((w) => ({
        key: metaNamespaceKeyFunc(w),
        color: w.spec.color,
        size: w.spec.size,
        managedFields: w.metadata?.managedFields !== undefined,
      })),
      metadata: meta.lister.list().map((m) => ({
        key: metaNamespaceKeyFunc(m),
        kind: m.kind,
        labels: { ...m.metadata.labels },
        hasSpec: 'spec' in m,
      })),
    };
    result.widgets.sort((a, b) => a.key.localeCompare(b.key));
    result.metadata.sort((a, b) => a.key.localeCompare(b.key));
    for (const w of result.widgets)
      log(
        `cached ${w.key}: ${w.color} size ${w.size}, managedFields ${w.managedFields ? 'kept' : 'dropped'}`,
      );
    for (const m of result.metadata)
      log(
        `metadata-only ${m.key}: kind ${m.kind ?? '-'}, labels ${JSON.stringify(m.labels)}, spec ${m.hasSpec ? 'present' : 'absent'}`,
      );
    return result;
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
    stop.abort();
    await factory.shutdown();
    await server?.close();
  }
}
