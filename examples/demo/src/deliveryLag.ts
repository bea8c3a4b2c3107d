/**
 * Delivery lag on the embedded server: the demo records when it wrote each object (by key and
 * resourceVersion) and a handler reports what it sees. A write counts as delivered once the handler
 * sees that object at that resourceVersion or a later one (a relist may skip intermediate versions),
 * or sees its deletion.
 */
export class DeliveryLag {
  /** Undelivered writes per key, oldest first. */
  readonly #pending = new Map<string, Array<{ rv: number; at: number }>>();
  readonly #lags: number[] = [];

  constructor(private readonly now: () => number = Date.now) {}

  /** The demo wrote `key` at `resourceVersion`. */
  wrote(key: string, resourceVersion: string | undefined): void {
    const rv = Number(resourceVersion);
    if (!Number.isFinite(rv)) return;
    const list = this.#pending.get(key);
    if (list) list.push({ rv, at: this.now() });
    else this.#pending.set(key, [{ rv, at: this.now() }]);
  }

  /** A handler saw `key` at `resourceVersion` (an add or an update). */
  saw(key: string, resourceVersion: string | undefined): void {
    const list = this.#pending.get(key);
    if (!list) return;
    const rv = Number(resourceVersion);
    const now = this.now();
    let n = 0;
    while (n < list.length && list[n]!.rv <= rv) this.#lags.push(now - list[n++]!.at);
    if (n === list.length) this.#pending.delete(key);
    else list.splice(0, n);
  }

  /** A handler saw `key` deleted: every write of it is delivered. */
  sawDeleted(key: string): void {
    const list = this.#pending.get(key);
    if (!list) return;
    const now = this.now();
    for (const w of list) this.#lags.push(now - w.at);
    this.#pending.delete(key);
  }

  /** How long the oldest undelivered write has waited, ms (0 when the handler has seen everything). */
  current(): number {
    let oldest = Infinity;
    for (const list of this.#pending.values()) if (list[0]!.at < oldest) oldest = list[0]!.at;
    return oldest === Infinity ? 0 : this.now() - oldest;
  }

  /** Writes not delivered yet. */
  pending(): number {
    let n = 0;
    for (const list of this.#pending.values()) n += list.length;
    return n;
  }

  /** Percentiles of the delivered writes' lag, ms. */
  summary(): { writes: number; p50: number; p99: number; max: number } {
    const sorted = [...this.#lags].sort((a, b) => a - b);
    const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
    return { writes: sorted.length, p50: at(0.5), p99: at(0.99), max: sorted.at(-1) ?? 0 };
  }
}

/** `3 ms`, `1.2 s`, `14 s`. */
export function formatMs(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 10_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.round(ms / 1000)} s`;
}
