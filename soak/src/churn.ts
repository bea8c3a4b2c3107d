import type { GroupVersionResource, KubeObject } from '@kinformer/core';
import type { FakeApiServer, ResourceDefinition } from '@kinformer/testing';
import { IndexedSet } from './indexedSet.js';
import type { Prng } from './prng.js';

/** The namespaces namespaced objects are spread over. The namespace-scoped informers watch the first. */
export const NAMESPACES: readonly string[] = Object.freeze(['ns-a', 'ns-b', 'ns-c', 'ns-d']);

/** Values of the `app` label; relabelling moves objects in and out of {@link SELECTED_LABEL_SELECTOR}. */
export const APPS: readonly string[] = Object.freeze(['web', 'api', 'db']);

/** The label selector of the selector-scoped informers. */
export const SELECTED_LABEL_SELECTOR = 'app=web';

/** The finalizer some objects are created with, so that their delete is graceful (MODIFIED, then DELETED). */
export const HOLD_FINALIZER = 'soak.kinformer.dev/hold';

/** The custom resource the soak serves (cluster-scoped, so that non-namespaced keys are exercised). */
export const WIDGETS_DEFINITION: ResourceDefinition = Object.freeze({
  group: 'example.com',
  version: 'v1',
  resource: 'widgets',
  kind: 'Widget',
  namespaced: false,
  customResource: true,
});

/** The name of each churned resource in reports. */
export type ChurnResourceName = 'pods' | 'configmaps' | 'widgets';

/** The writes the churn generator makes. */
export type ChurnOp =
  'create' | 'update' | 'relabel' | 'delete' | 'graceful-delete' | 'finalize' | 'recreate';

/** Every {@link ChurnOp}, in report order. */
export const CHURN_OPS: readonly ChurnOp[] = Object.freeze([
  'create',
  'update',
  'relabel',
  'delete',
  'graceful-delete',
  'finalize',
  'recreate',
]);

/** A resource the generator writes. */
export interface ChurnResource {
  readonly name: ChurnResourceName;
  readonly gvr: GroupVersionResource;
  readonly namespaced: boolean;
  /** Share of the object budget. */
  readonly share: number;
}

/** The three churned resources. */
export const CHURN_RESOURCES: readonly ChurnResource[] = Object.freeze([
  { name: 'pods', gvr: { version: 'v1', resource: 'pods' }, namespaced: true, share: 0.6 },
  { name: 'configmaps', gvr: { version: 'v1', resource: 'configmaps' }, namespaced: true, share: 0.3 },
  {
    name: 'widgets',
    gvr: { group: 'example.com', version: 'v1', resource: 'widgets' },
    namespaced: false,
    share: 0.1,
  },
]);

/** Options of {@link ChurnGenerator}. */
export interface ChurnOptions {
  /** How many objects live at once, across all resources (the generator hovers around it). */
  objects: number;
  /**
   * Called after each step that wrote, with the resource and the server's resourceVersion after the
   * write(s): the version a handler must reach for the write to count as delivered.
   */
  onWrite?: (resource: ChurnResourceName, resourceVersion: number) => void;
}

interface ResourceState {
  readonly resource: ChurnResource;
  readonly target: number;
  /** Live objects that are not being deleted (writable). */
  readonly active: IndexedSet;
  /** Live objects with a deletionTimestamp, waiting for `finalize`. */
  readonly terminating: IndexedSet;
  /** Keys of the name pool that are not live. */
  readonly free: IndexedSet;
  /** Live keys created with the finalizer. */
  readonly held: Set<string>;
}

const OP_WEIGHTS: Readonly<Record<ChurnOp, number>> = {
  create: 20,
  update: 40,
  relabel: 15,
  delete: 12,
  'graceful-delete': 4,
  finalize: 5,
  recreate: 4,
};

/**
 * Writes random churn into a {@link FakeApiServer} through its in-process API: creates, updates,
 * label changes that move objects in and out of {@link SELECTED_LABEL_SELECTOR}, deletes (immediate,
 * and graceful through a finalizer), and delete-then-recreate under the same name (a new uid). Names
 * come from a fixed pool (1.5× the target per resource), so the key space stays bounded however long
 * the run, and names are reused. Every choice comes from the given {@link Prng}: a seed fixes the
 * sequence of writes. The generator keeps its own model of what exists, in step with the server.
 */
export class ChurnGenerator {
  /** Writes made, by operation. */
  readonly counts: Record<ChurnOp, number> = {
    create: 0,
    update: 0,
    relabel: 0,
    delete: 0,
    'graceful-delete': 0,
    finalize: 0,
    recreate: 0,
  };
  /** Writes the server refused (the model was out of step: a bug in the soak, reported as a mismatch). */
  errors = 0;
  /** The first few refused writes, for the report. */
  readonly errorSamples: string[] = [];

  readonly #server: FakeApiServer;
  readonly #prng: Prng;
  readonly #states: ResourceState[];
  readonly #shares: Record<ChurnResourceName, number>;
  readonly #onWrite: ChurnOptions['onWrite'];
  #generation = 0;

  constructor(server: FakeApiServer, prng: Prng, options: ChurnOptions) {
    this.#server = server;
    this.#prng = prng;
    this.#onWrite = options.onWrite;
    this.#states = CHURN_RESOURCES.map((resource) => {
      const target = Math.max(1, Math.round(options.objects * resource.share));
      const state: ResourceState = {
        resource,
        target,
        active: new IndexedSet(),
        terminating: new IndexedSet(),
        free: new IndexedSet(),
        held: new Set(),
      };
      const pool = Math.ceil(target * 1.5);
      for (let i = 0; i < pool; i++) {
        const name = `${resource.name.slice(0, -1)}-${i.toString(36)}`;
        state.free.add(resource.namespaced ? `${NAMESPACES[i % NAMESPACES.length]!}/${name}` : name);
      }
      return state;
    });
    this.#shares = { pods: 0, configmaps: 0, widgets: 0 };
    for (const r of CHURN_RESOURCES) this.#shares[r.name] = r.share;
  }

  /** Writes made so far. */
  get writes(): number {
    let n = 0;
    for (const op of CHURN_OPS) n += this.counts[op];
    return n;
  }

  /** Live objects (terminating ones included). */
  get liveObjects(): number {
    let n = 0;
    for (const s of this.#states) n += s.active.size + s.terminating.size;
    return n;
  }

  /** Creates the initial objects (the target count of every resource). Not counted as churn. */
  populate(): void {
    for (const state of this.#states) {
      while (state.active.size < state.target) this.#create(state, false);
    }
  }

  /** Makes one random write. */
  step(): void {
    const prng = this.#prng;
    const name = prng.weighted(this.#shares);
    const state = this.#states.find((s) => s.resource.name === name)!;
    const live = state.active.size + state.terminating.size;
    let op = prng.weighted(OP_WEIGHTS);
    // Hover around the target: below 90 % favour creates, above 110 % favour deletes.
    if (live < state.target * 0.9 && prng.chance(0.5)) op = 'create';
    else if (live > state.target * 1.1 && prng.chance(0.5)) op = 'delete';
    if (op === 'finalize' && state.terminating.size === 0) op = 'update';
    if (op === 'create' && state.free.size === 0) op = 'update';
    if (op !== 'create' && op !== 'finalize' && state.active.size === 0) op = 'create';
    if (op === 'create' && state.free.size === 0) return;
    const before = this.#server.resourceVersion;
    try {
      this.#apply(state, op);
    } catch (err) {
      this.errors++;
      if (this.errorSamples.length < 5)
        this.errorSamples.push(`${state.resource.name} ${op}: ${(err as Error).message}`);
    }
    const after = this.#server.resourceVersion;
    if (after !== before) this.#onWrite?.(name, Number(after));
  }

  #apply(state: ResourceState, op: ChurnOp): void {
    const prng = this.#prng;
    switch (op) {
      case 'create':
        this.#create(state, true);
        return;
      case 'update': {
        const key = state.active.pick(prng)!;
        this.#server.patch(state.resource.gvr, key, this.#updatePatch(state.resource));
        this.counts.update++;
        return;
      }
      case 'relabel': {
        const key = state.active.pick(prng)!;
        this.#server.patch(state.resource.gvr, key, {
          metadata: {
            labels: { app: prng.pick(APPS) },
            annotations: { 'soak.kinformer.dev/generation': this.#nextGeneration() },
          },
        });
        this.counts.relabel++;
        return;
      }
      case 'delete':
      case 'graceful-delete': {
        const key = state.active.pick(prng)!;
        this.#server.delete(state.resource.gvr, key);
        state.active.delete(key);
        if (state.held.has(key)) {
          state.terminating.add(key);
          this.counts['graceful-delete']++;
        } else {
          state.free.add(key);
          this.counts.delete++;
        }
        return;
      }
      case 'finalize': {
        const key = state.terminating.pick(prng)!;
        this.#server.patch(state.resource.gvr, key, { metadata: { finalizers: null } });
        state.terminating.delete(key);
        state.held.delete(key);
        state.free.add(key);
        this.counts.finalize++;
        return;
      }
      case 'recreate': {
        const key = state.active.pick(prng)!;
        if (state.held.has(key)) {
          this.#server.patch(state.resource.gvr, key, this.#updatePatch(state.resource));
          this.counts.update++;
          return;
        }
        this.#server.delete(state.resource.gvr, key);
        this.#server.create(state.resource.gvr, this.#build(state.resource, key, false));
        this.counts.recreate++;
        return;
      }
    }
  }

  #create(state: ResourceState, counted: boolean): void {
    const key = state.free.pick(this.#prng)!;
    const hold = this.#prng.chance(0.1);
    this.#server.create(state.resource.gvr, this.#build(state.resource, key, hold));
    state.free.delete(key);
    state.active.add(key);
    if (hold) state.held.add(key);
    if (counted) this.counts.create++;
  }

  #nextGeneration(): string {
    return String(++this.#generation);
  }

  #build(resource: ChurnResource, key: string, hold: boolean): KubeObject {
    const prng = this.#prng;
    const slash = key.indexOf('/');
    const metadata: Record<string, unknown> = {
      name: slash === -1 ? key : key.slice(slash + 1),
      labels: { app: prng.pick(APPS), tier: prng.pick(['front', 'back']) },
      annotations: { 'soak.kinformer.dev/generation': this.#nextGeneration() },
    };
    if (slash !== -1) metadata.namespace = key.slice(0, slash);
    if (hold) metadata.finalizers = [HOLD_FINALIZER];
    switch (resource.name) {
      case 'pods':
        return {
          metadata,
          spec: {
            containers: [
              {
                name: 'app',
                image: `registry.example/app:${prng.int(1000)}`,
                resources: { requests: { cpu: '100m' } },
              },
            ],
            nodeName: `node-${prng.int(50)}`,
          },
          status: { phase: prng.pick(['Pending', 'Running']) },
        } as KubeObject;
      case 'configmaps':
        return { metadata, data: { value: randomText(prng, prng.between(16, 256)) } } as KubeObject;
      case 'widgets':
        return {
          apiVersion: 'example.com/v1',
          kind: 'Widget',
          metadata,
          spec: { color: prng.pick(['red', 'green', 'blue']), size: prng.int(100) },
        } as KubeObject;
    }
  }

  #updatePatch(resource: ChurnResource): unknown {
    const prng = this.#prng;
    const annotations = { 'soak.kinformer.dev/generation': this.#nextGeneration() };
    switch (resource.name) {
      case 'pods':
        return {
          metadata: { annotations },
          status: { phase: prng.pick(['Pending', 'Running', 'Succeeded']) },
        };
      case 'configmaps':
        return { metadata: { annotations }, data: { value: randomText(prng, prng.between(16, 256)) } };
      case 'widgets':
        return { metadata: { annotations }, spec: { size: prng.int(100) } };
    }
  }
}

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

function randomText(prng: Prng, length: number): string {
  let s = '';
  for (let i = 0; i < length; i++) s += ALPHABET[prng.int(ALPHABET.length)]!;
  return s;
}
