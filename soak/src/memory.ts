import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * A function that runs a full garbage collection: `globalThis.gc` when node runs with
 * `--expose-gc`, otherwise one obtained by turning the flag on at run time (works on node 22–24);
 * `undefined` if neither works.
 */
export function findGc(): (() => void) | undefined {
  const exposed = (globalThis as { gc?: unknown }).gc;
  if (typeof exposed === 'function') return exposed as () => void;
  try {
    setFlagsFromString('--expose-gc');
    const gc: unknown = runInNewContext('gc');
    if (typeof gc === 'function') return gc as () => void;
  } catch {
    // not available: memory figures are then taken without a collection
  }
  return undefined;
}

/** `heapUsed` after two full collections (if `gc` is given), in bytes. */
export function heapAfterGc(gc: (() => void) | undefined): number {
  if (gc !== undefined) {
    gc();
    gc();
  }
  return process.memoryUsage().heapUsed;
}

/** Samples `heapUsed` on a timer and keeps the highest value. */
export class HeapSampler {
  /** The highest `heapUsed` seen, bytes. */
  max = 0;
  /** Samples taken. */
  samples = 0;
  #timer: NodeJS.Timeout | undefined;

  /** Starts sampling every `intervalMs`. */
  start(intervalMs: number): void {
    this.sample();
    this.#timer = setInterval(() => this.sample(), intervalMs);
    this.#timer.unref();
  }

  /** Takes one sample now. */
  sample(): number {
    const used = process.memoryUsage().heapUsed;
    this.samples++;
    if (used > this.max) this.max = used;
    return used;
  }

  stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }
}

/** `bytes` as `123.4 MiB`. */
export function formatBytes(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}
