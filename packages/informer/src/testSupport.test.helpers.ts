/**
 * Helpers shared by this package's tests (not shipped: `*.test.*` files are excluded from the
 * package, and Jest only runs `*.test.ts`).
 */
import type { KubeList, KubeObject, Logger } from '@kinformer/core';
import { createLogger } from '@kinformer/core';

export type Pod = KubeObject & { spec?: { nodeName?: string; note?: string } };

/** A pod `ns/name` at resourceVersion `rv`. */
export function pod(name: string, rv: string, ns = 'default', extra: Partial<Pod> = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: ns, resourceVersion: rv, uid: `uid-${name}` },
    ...extra,
  };
}

/** A pod list at resourceVersion `rv`. */
export function podList(rv: string, ...items: Pod[]): KubeList<Pod> {
  return { metadata: { resourceVersion: rv }, items };
}

/** Waits (real time, bounded) until `condition()` holds, checking on every event-loop turn. */
export async function waitFor(
  condition: () => boolean,
  what = 'a condition',
  timeoutMs = 5000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/** Lets pending promise callbacks and a few event-loop turns run. */
export async function settle(turns = 5): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** A logger whose lines (parsed) land in `lines`. */
export function capturingLogger(level = 'warn'): { logger: Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger({
    level,
    destination: {
      write(line: string) {
        lines.push(JSON.parse(line) as Record<string, unknown>);
      },
    },
  });
  return { logger, lines };
}

/** A backoff that never waits (the reflector then retries on the next event-loop turn). */
export const noBackoff = { next: (): number => 0, reset: (): void => undefined };

/** `ns/name` of an object. */
export function keyOf(obj: KubeObject): string {
  const m = obj.metadata ?? {};
  return m.namespace ? `${m.namespace}/${m.name ?? ''}` : (m.name ?? '');
}
