/**
 * Pods for the embedded FakeApiServer: a seeded random source, a seed of pods spread over nodes, and
 * one step of churn (creates, moves between nodes, label changes, deletes). Used by the demo and by
 * the tests, which need the same kind of load.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { FakeApiServer } from '@kinformer/testing';
import { prng } from '@kinformer/test-tools';
import { ErrorCodes, isKinformerError } from 'kinformer';

/**
 * The events.k8s.io/v1 Event type, for `server.registerResource`: FakeApiServer serves core/v1 events
 * by default, and the controller's recorder writes events.k8s.io/v1 ones.
 */
export const EVENTS_V1_RESOURCE = {
  group: 'events.k8s.io',
  version: 'v1',
  resource: 'events',
  kind: 'Event',
  namespaced: true,
} as const;

/** Namespaces the example's pods live in. */
export const POD_NAMESPACES = ['default', 'shop', 'payments', 'batch'] as const;

/** `node-0` … `node-<n-1>`. */
export function nodeName(i: number): string {
  return `node-${i}`;
}

/** Pod number `i` on `node` (`undefined`: not scheduled yet). */
export function makePod(i: number, node: string | undefined): V1Pod {
  const app = ['web', 'api', 'worker'][i % 3]!;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `${app}-${i.toString(36)}`,
      namespace: POD_NAMESPACES[i % POD_NAMESPACES.length]!,
      labels: { app },
    },
    spec: {
      ...(node === undefined ? {} : { nodeName: node }),
      containers: [{ name: app, image: `registry.example.com/${app}:1` }],
    },
  };
}

/** Options of {@link PodChurn}. */
export interface PodChurnOptions {
  /** Nodes pods are spread over (default 8). */
  nodes?: number;
  /** Seed of the random choices (default 42). */
  seed?: number;
}

/** Counts of what a {@link PodChurn} did. */
export interface ChurnCounts {
  created: number;
  moved: number;
  relabelled: number;
  deleted: number;
}

/**
 * Writes pods to a FakeApiServer in-process (synchronously, with the same watch events as over
 * HTTP): `seed(n)` creates n pods on random nodes, `step(ops)` does `ops` random changes. It keeps
 * the keys of the pods it created, so a step costs O(1) writes and no list; pods others deleted
 * meanwhile are skipped.
 */
export class PodChurn {
  readonly counts: ChurnCounts = { created: 0, moved: 0, relabelled: 0, deleted: 0 };
  readonly #server: FakeApiServer;
  readonly #nodes: number;
  readonly #random: () => number;
  /** `namespace/name` of the pods this churn created and has not deleted. */
  readonly #live: string[] = [];
  #next = 0;

  constructor(server: FakeApiServer, options: PodChurnOptions = {}) {
    this.#server = server;
    this.#nodes = options.nodes ?? 8;
    this.#random = prng(options.seed ?? 42);
  }

  /** A random node name. */
  randomNode(): string {
    return nodeName(Math.floor(this.#random() * this.#nodes));
  }

  /** Creates `n` pods on random nodes. */
  seed(n: number): void {
    const pods: V1Pod[] = [];
    for (let k = 0; k < n; k++) pods.push(this.#newPod());
    this.#server.createMany('pods', pods);
    this.counts.created += n;
  }

  /** `ops` random changes: 30 % creates, 25 % moves to another node, 20 % label changes, 25 % deletes. */
  step(ops = 1): void {
    for (let k = 0; k < ops; k++) {
      const r = this.#random();
      if (r < 0.3 || this.#live.length === 0) {
        this.#server.create('pods', this.#newPod());
        this.counts.created++;
        continue;
      }
      const index = Math.floor(this.#random() * this.#live.length);
      const key = this.#live[index]!;
      try {
        if (r < 0.55) {
          this.#server.patch('pods', key, { spec: { nodeName: this.randomNode() } });
          this.counts.moved++;
        } else if (r < 0.75) {
          this.#server.patch('pods', key, { metadata: { labels: { revision: String(this.#next + k) } } });
          this.counts.relabelled++;
        } else {
          this.#forget(index);
          this.#server.delete('pods', key);
          this.counts.deleted++;
        }
      } catch (err) {
        if (!isKinformerError(err, ErrorCodes.NOT_FOUND)) throw err;
        if (this.#live[index] === key) this.#forget(index); // someone else deleted it
      }
    }
  }

  #newPod(): V1Pod {
    const pod = makePod(this.#next++, this.randomNode());
    this.#live.push(`${pod.metadata!.namespace}/${pod.metadata!.name}`);
    return pod;
  }

  /** Removes the key at `index` in O(1) (swap with the last). */
  #forget(index: number): void {
    const last = this.#live.pop()!;
    if (index < this.#live.length) this.#live[index] = last;
  }
}
