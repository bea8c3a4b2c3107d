/**
 * Thrown by a pop process function to put the popped item back into the queue (client-go's
 * `ErrRequeue`). `cause` is the underlying failure, if any.
 *
 * What `pop` does with it:
 * - `DeltaFIFO`: the deltas go back under their key. If the key was queued again meanwhile, they are
 *   merged in front of the newer deltas and the key keeps its current place in line; otherwise the
 *   key is appended at the back (client-go's `addIfNotPresent`).
 * - `RealFIFO`, `AtomicFIFO`: the entry (or the whole batch of `popBatch`) goes back to the head of
 *   the log, so the order of events is kept.
 * - In every queue the item counts as processed for `hasSynced` (client-go 1.36 counts a pop once
 *   its process function returned, whatever it returned): a requeued initial item is popped again
 *   with `isInInitialList` false.
 * - Then `pop` resolves with the deltas when there is no `cause` (a silent retry), and rejects with
 *   this `RequeueError` when there is one (client-go returns `ErrRequeue.Err`).
 */
export class RequeueError extends Error {
  override readonly name = 'RequeueError';

  constructor(cause?: unknown) {
    super(requeueMessage(cause), cause === undefined ? undefined : { cause });
  }
}

function requeueMessage(cause: unknown): string {
  if (cause === undefined) return 'requeue';
  if (cause instanceof Error) return `requeue: ${cause.message}`;
  if (typeof cause === 'string') return `requeue: ${cause}`;
  return 'requeue (see cause)';
}
