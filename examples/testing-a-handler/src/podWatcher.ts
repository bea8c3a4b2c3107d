/**
 * The code under test: a tiny handler that tracks failing pods and sends an alert when a pod starts
 * failing, when it recovers, and when a failing pod goes away. It is an ordinary
 * `ResourceEventHandler`: it knows nothing about informers, HTTP or time, which is what makes it easy
 * to test (see `podWatcher.test.ts` and `podWatcher.http.test.ts`).
 */
import type { V1Pod } from '@kubernetes/client-node';
import { deletionHandlingMetaNamespaceKeyFunc, metaNamespaceKeyFunc } from 'kinformer';
import type { DeletedFinalStateUnknown, ResourceEventHandler } from 'kinformer';

/** What {@link PodWatcher} reports. `key` is `namespace/name`. */
export type PodAlert =
  | { type: 'failing'; key: string; reason: string }
  | { type: 'recovered'; key: string }
  | { type: 'gone'; key: string };

/** Where alerts go (a pager, a Slack webhook, a test's array). May be async. */
export type AlertSink = (alert: PodAlert) => void | Promise<void>;

/** Container waiting reasons that mean "this pod is failing". */
const FAILING_WAITING_REASONS: ReadonlySet<string> = new Set([
  'CrashLoopBackOff',
  'ImagePullBackOff',
  'ErrImagePull',
]);

/** Why `pod` is failing (`Failed`, `app: CrashLoopBackOff`), or `undefined` when it is not. */
export function failureReason(pod: V1Pod): string | undefined {
  if (pod.status?.phase === 'Failed') return pod.status.reason ?? 'Failed';
  for (const c of pod.status?.containerStatuses ?? []) {
    const reason = c.state?.waiting?.reason;
    if (reason !== undefined && FAILING_WAITING_REASONS.has(reason)) return `${c.name}: ${reason}`;
  }
  return undefined;
}

/**
 * Alerts once per transition: a pod that keeps failing (updates, resyncs, relists) is reported once;
 * a delete, including a delete the informer missed (a `DeletedFinalStateUnknown` tombstone), of a
 * failing pod is reported as `gone`. Its handlers are async: the informer waits for each alert to be
 * sent before giving this handler its next event, so alerts go out in order.
 */
export class PodWatcher implements ResourceEventHandler<V1Pod> {
  readonly #send: AlertSink;
  readonly #failing = new Map<string, string>();

  constructor(send: AlertSink) {
    this.#send = send;
  }

  /** The keys of the pods failing right now, sorted. */
  failing(): string[] {
    return [...this.#failing.keys()].sort();
  }

  async onAdd(pod: V1Pod): Promise<void> {
    await this.#observe(pod);
  }

  async onUpdate(_oldPod: V1Pod, pod: V1Pod): Promise<void> {
    await this.#observe(pod);
  }

  async onDelete(obj: V1Pod | DeletedFinalStateUnknown<V1Pod>): Promise<void> {
    // Works for a pod and for a tombstone alike.
    const key = deletionHandlingMetaNamespaceKeyFunc(obj);
    if (this.#failing.delete(key)) await this.#send({ type: 'gone', key });
  }

  async #observe(pod: V1Pod): Promise<void> {
    const key = metaNamespaceKeyFunc(pod);
    const reason = failureReason(pod);
    const was = this.#failing.get(key);
    if (reason !== undefined && was === undefined) {
      this.#failing.set(key, reason);
      await this.#send({ type: 'failing', key, reason });
    } else if (reason === undefined && was !== undefined) {
      this.#failing.delete(key);
      await this.#send({ type: 'recovered', key });
    } else if (reason !== undefined) {
      this.#failing.set(key, reason);
    }
  }
}
