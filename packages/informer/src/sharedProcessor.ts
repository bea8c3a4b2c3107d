import type { Notification, ProcessorListener } from './processorListener.js';

/**
 * client-go's `sharedProcessor`: the set of listeners of one informer. `distribute` hands a
 * notification to every listener (a sync notification only to the listeners whose resync is due).
 * Listeners added before `run` start delivering when it is called; listeners added later start at
 * once. After `stop` nothing is delivered any more and the processor cannot be restarted.
 */
export class SharedProcessor<T> {
  readonly #listeners = new Set<ProcessorListener<T>>();
  #running = false;
  #stopped = false;

  /** Adds a listener; starts it when the processor runs. */
  addListener(listener: ProcessorListener<T>): void {
    if (this.#stopped) return;
    this.#listeners.add(listener);
    if (this.#running) listener.start();
  }

  /** Removes and stops a listener. False when it was not one of ours (then nothing happens). */
  removeListener(listener: ProcessorListener<T>): boolean {
    if (!this.#listeners.delete(listener)) return false;
    void listener.stop();
    return true;
  }

  has(listener: ProcessorListener<T>): boolean {
    return this.#listeners.has(listener);
  }

  listeners(): IterableIterator<ProcessorListener<T>> {
    return this.#listeners.values();
  }

  get size(): number {
    return this.#listeners.size;
  }

  /** Queues `notification` to every listener, or, when `isSync`, to those currently resyncing. */
  distribute(notification: Notification<T>, isSync: boolean): void {
    for (const listener of this.#listeners) {
      if (!isSync || listener.syncing) listener.add(notification);
    }
  }

  /** Starts every listener. */
  run(): void {
    if (this.#running || this.#stopped) return;
    this.#running = true;
    for (const listener of this.#listeners) listener.start();
  }

  /**
   * Stops every listener (pending notifications are dropped) and resolves once the handler calls in
   * progress have settled. The processor is not reusable.
   */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#running = false;
    const stopping: Promise<void>[] = [];
    for (const listener of this.#listeners) stopping.push(listener.stop());
    this.#listeners.clear();
    await Promise.all(stopping);
  }

  /**
   * Called by the reflector's resync timer: marks each listener as resyncing when its own period is
   * due (and schedules its next resync), and says whether any is due (if none, the resync is skipped).
   */
  shouldResync(now: number): boolean {
    let needed = false;
    for (const listener of this.#listeners) {
      const due = listener.shouldResync(now);
      listener.syncing = due;
      if (due) {
        needed = true;
        listener.determineNextResync(now);
      }
    }
    return needed;
  }

  /** The informer's resync check period changed: recompute every listener's effective period. */
  resyncCheckPeriodChanged(checkPeriodMs: number): void {
    for (const listener of this.#listeners) {
      listener.setResyncPeriod(determineResyncPeriod(listener.requestedResyncPeriodMs, checkPeriodMs));
    }
  }
}

/**
 * client-go's `determineResyncPeriod`: 0 when the handler wants none or the informer cannot resync
 * (check period 0); the check period when the handler asked for less; otherwise what it asked for.
 */
export function determineResyncPeriod(desiredMs: number, checkMs: number): number {
  if (desiredMs === 0) return 0;
  if (checkMs === 0) return 0;
  return desiredMs < checkMs ? checkMs : desiredMs;
}
