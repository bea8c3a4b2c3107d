import type { KubeObject } from '@kinformer/core';
import type { InformerAndLister, SharedIndexInformer } from '@kinformer/informer';
import type { HealthCheck } from '@kinformer/prometheus/health';
import type { InformerScope } from './cachePolicy.js';
import { kindString } from './kinds.js';
import type { Kind } from './kinds.js';

/** One informer the Manager made. @internal */
export interface InformerEntry {
  /** `kindString(kind)`. */
  readonly kind: string;
  /** `''`: all namespaces. */
  readonly namespace: string;
  /** `labelSelector&fieldSelector`. */
  readonly selectors: string;
  readonly metadataOnly: boolean;
  readonly transform: ((obj: KubeObject) => KubeObject) | undefined;
  /** Made for a call's own transform: its objects are not what `get` returns. */
  readonly projected: boolean;
  readonly pair: InformerAndLister<KubeObject>;
}

/**
 * The Manager's shared informers, by scope: which one serves a request, which one `get` reads a
 * kind from, and whether they have all synced.
 */
export class InformerRegistry {
  readonly #entries = new Map<string, InformerEntry>();
  /** The Manager's namespace (`''`: all). */
  readonly #namespace: string;

  constructor(namespace: string) {
    this.#namespace = namespace;
  }

  /** The informer that serves `scope` with `transform`, if one exists. */
  find(
    kind: Kind,
    scope: InformerScope,
    transform: ((obj: KubeObject) => KubeObject) | undefined,
  ): InformerEntry | undefined {
    const namespace = scope.namespace ?? this.#namespace;
    const selectors = selectorsKey(scope);
    const same = [...this.#entries.values()].filter(
      (e) => e.kind === kindString(kind) && e.namespace === namespace && e.selectors === selectors,
    );
    return (
      same.find((e) => e.metadataOnly === scope.metadataOnly && e.transform === transform) ??
      // The full objects hold the metadata: no second informer for a metadata-only request.
      (scope.metadataOnly ? same.find((e) => !e.metadataOnly && !e.projected) : undefined)
    );
  }

  /** Records an informer made for `scope` (the factory warns when one kind is cached twice in one scope). */
  add(
    kind: Kind,
    scope: InformerScope,
    entry: Pick<InformerEntry, 'transform' | 'projected' | 'pair'>,
  ): void {
    this.#entries.set(entry.pair.informer.name, {
      kind: kindString(kind),
      namespace: scope.namespace ?? this.#namespace,
      selectors: selectorsKey(scope),
      metadataOnly: scope.metadataOnly,
      ...entry,
    });
  }

  /** The informer `get` reads `kind` from in `namespace`: a full one, or metadata-only when the policy says so. */
  readable(kind: Kind, namespace: string, metadataOnly: boolean): InformerAndLister<KubeObject> | undefined {
    const key = kindString(kind);
    for (const e of this.#entries.values())
      if (
        e.kind === key &&
        e.metadataOnly === metadataOnly &&
        !e.projected &&
        (e.namespace === '' || e.namespace === namespace)
      )
        return e.pair;
    return undefined;
  }

  /**
   * The `/readyz` check: every informer (and every one `more` lists) synced; the failure names
   * each one and why.
   */
  syncCheck(
    started: () => boolean,
    more: () => Iterable<SharedIndexInformer<KubeObject>> = () => [],
  ): HealthCheck {
    return {
      name: 'informer-sync',
      check: () => {
        if (!started()) return 'not started';
        const all = [...[...this.#entries.values()].map((e) => e.pair.informer), ...more()];
        const pending = all.filter((i) => !i.hasSynced());
        if (pending.length === 0) return undefined;
        return pending
          .map((i) => {
            const err = i.syncError();
            return err === undefined ? `${i.name} not synced` : `${i.name}: ${err.code} ${err.message}`;
          })
          .join('; ');
      },
    };
  }
}

function selectorsKey(scope: InformerScope): string {
  return `${scope.labelSelector ?? ''}&${scope.fieldSelector ?? ''}`;
}
