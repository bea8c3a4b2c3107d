import { apiError, requestOptions } from '@kinformer/client-node';
import { EventsV1Api, V1MicroTime } from '@kubernetes/client-node';
import type { EventsV1Event, KubeConfig } from '@kubernetes/client-node';
import type { CorrelatedEvent } from './eventCorrelator.js';

/** One JSON Patch (RFC 6902) operation. */
export interface JsonPatchOperation {
  op: 'add' | 'replace' | 'remove' | 'test' | 'move' | 'copy';
  path: string;
  value?: unknown;
}

/**
 * Where an {@link ApiEventRecorder} writes Events (client-go's `EventSink`). Both calls reject with a
 * `KinformerError`: one with an `httpStatus` when the server answered, `ERR_CONNECTION` when it did
 * not, `ERR_ABORTED` when `signal` aborted.
 */
export interface EventSink {
  /** Creates `event`; resolves with the server's copy. */
  create(event: EventsV1Event, signal: AbortSignal): Promise<EventsV1Event>;
  /** Applies `patch` to the Event named by `event`'s metadata; resolves with the server's copy. */
  patch(event: EventsV1Event, patch: JsonPatchOperation[], signal: AbortSignal): Promise<EventsV1Event>;
}

/** An {@link EventSink} writing `events.k8s.io/v1` Events through client-node's `EventsV1Api`. */
export function eventsV1Sink(kubeConfig: KubeConfig): EventSink {
  const api = kubeConfig.makeApiClient(EventsV1Api);
  const what = (e: EventsV1Event): string => `event ${e.metadata?.namespace ?? ''}/${e.metadata?.name ?? ''}`;
  return {
    async create(event, signal) {
      try {
        return await api.createNamespacedEvent(
          { namespace: event.metadata?.namespace ?? 'default', body: event },
          requestOptions(signal),
        );
      } catch (err) {
        throw apiError(err, { what: what(event), signal });
      }
    },
    async patch(event, patch, signal) {
      try {
        return await api.patchNamespacedEvent(
          {
            name: event.metadata?.name ?? '',
            namespace: event.metadata?.namespace ?? 'default',
            body: patch,
          },
          requestOptions(signal),
        );
      } catch (err) {
        throw apiError(err, { what: what(event), signal });
      }
    },
  };
}

/**
 * The `events.k8s.io/v1` Event for a correlated event: `eventTime` is the first occurrence; from the
 * second occurrence on, `series` holds the count and the last occurrence (as client-go's
 * `tools/events` writes them). The deprecated core/v1 fields are left unset: the API server refuses
 * them on events.k8s.io/v1 creates.
 */
export function toEventsV1Event(event: CorrelatedEvent): EventsV1Event {
  return {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: {
      name: event.name,
      namespace: event.namespace,
      ...(event.annotations === undefined ? {} : { annotations: { ...event.annotations } }),
      ...(event.resourceVersion === undefined ? {} : { resourceVersion: event.resourceVersion }),
    },
    eventTime: new V1MicroTime(event.firstTimestamp),
    ...(event.count > 1
      ? { series: { count: event.count, lastObservedTime: new V1MicroTime(event.lastTimestamp) } }
      : {}),
    reportingController: event.reportingController,
    reportingInstance: event.reportingInstance,
    action: event.action,
    reason: event.reason,
    regarding: { ...event.regarding },
    ...(event.related === undefined ? {} : { related: { ...event.related } }),
    note: event.note,
    type: event.type,
  };
}

/**
 * The patch that raises an existing Event's count: it sets only `series` (client-go's
 * `createPatchBytesForSeries`). The note is immutable on events.k8s.io/v1 Events, so an aggregate
 * event keeps the message of its first occurrence.
 */
export function seriesPatch(event: CorrelatedEvent): JsonPatchOperation[] {
  return [
    {
      op: 'add',
      path: '/series',
      value: { count: event.count, lastObservedTime: new V1MicroTime(event.lastTimestamp) },
    },
  ];
}
