import { ErrorCodes } from '@kinformer/core';
import type { KubeObject, LabelSelector, Logger } from '@kinformer/core';
import type { LabelRequirement } from '@kinformer/core/internal';
import { captureLogs } from '@kinformer/test-tools';
import type { LogLine } from '@kinformer/test-tools';
import { newIndexer } from './cache.js';
import { Lister } from './lister.js';
import { metaNamespaceIndexFunc, NAMESPACE_INDEX } from './namespaceIndex.js';
import type { Indexer } from './store.js';

/** A hand-written equality selector, so these tests do not depend on core's parser. */
class EqualsSelector implements LabelSelector {
  readonly requirements: readonly LabelRequirement[];
  calls = 0;
  constructor(private readonly wanted: Record<string, string>) {
    this.requirements = Object.entries(wanted).map(([key, value]) => ({
      key,
      operator: '=' as const,
      values: [value],
    }));
  }
  matches(labels: Readonly<Record<string, string>> | undefined): boolean {
    this.calls++;
    return Object.entries(this.wanted).every(([k, v]) => labels?.[k] === v);
  }
  isEmpty(): boolean {
    return this.requirements.length === 0;
  }
  toString(): string {
    return this.requirements.map((r) => `${r.key}=${r.values[0]}`).join(',');
  }
}

function obj(namespace: string | undefined, name: string, labels?: Record<string, string>): KubeObject {
  return {
    metadata: {
      name,
      ...(namespace === undefined ? {} : { namespace }),
      ...(labels === undefined ? {} : { labels }),
    },
  };
}

const keysOf = (objs: KubeObject[]): string[] =>
  objs
    .map((o) =>
      o.metadata?.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : (o.metadata?.name ?? ''),
    )
    .sort();

function fill(indexer: Indexer<KubeObject>): void {
  indexer.add(obj('a', 'web-1', { app: 'web', tier: 'front' }));
  indexer.add(obj('a', 'web-2', { app: 'web', tier: 'back' }));
  indexer.add(obj('a', 'db-1', { app: 'db' }));
  indexer.add(obj('b', 'web-1', { app: 'web', tier: 'front' }));
  indexer.add(obj('b', 'nolabels'));
  indexer.add(obj(undefined, 'node-1', { app: 'web' }));
}

function withNamespaceIndex(): Indexer<KubeObject> {
  const indexer = newIndexer<KubeObject>(undefined, { [NAMESPACE_INDEX]: metaNamespaceIndexFunc });
  fill(indexer);
  return indexer;
}

/** Records which indexer methods are called (instead of jest.spyOn, unavailable as a global in ESM mode). */
function recording(indexer: Indexer<KubeObject>): {
  indexer: Indexer<KubeObject>;
  calls: Array<[string, unknown[]]>;
} {
  const calls: Array<[string, unknown[]]> = [];
  const proxy = new Proxy(indexer, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]): unknown => {
        calls.push([String(prop), args]);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { indexer: proxy, calls };
}

function lines(): { logger: Logger; seen: LogLine[] } {
  const { logger, lines: seen } = captureLogs('warn');
  return { logger, seen };
}

describe('Lister.list', () => {
  it('lists every object without a selector', () => {
    const lister = new Lister(withNamespaceIndex());
    expect(keysOf(lister.list())).toEqual([
      'a/db-1',
      'a/web-1',
      'a/web-2',
      'b/nolabels',
      'b/web-1',
      'node-1',
    ]);
  });

  it('lists the objects whose labels match the selector, across namespaces', () => {
    const lister = new Lister(withNamespaceIndex());
    expect(keysOf(lister.list(new EqualsSelector({ app: 'web' })))).toEqual([
      'a/web-1',
      'a/web-2',
      'b/web-1',
      'node-1',
    ]);
    expect(keysOf(lister.list(new EqualsSelector({ app: 'web', tier: 'front' })))).toEqual([
      'a/web-1',
      'b/web-1',
    ]);
    expect(lister.list(new EqualsSelector({ app: 'none' }))).toEqual([]);
  });

  // client-go: listers_test.go TestListAll (the empty-selector fast path)
  it('returns everything for an empty selector without evaluating labels', () => {
    const lister = new Lister(withNamespaceIndex());
    const empty = new EqualsSelector({});
    expect(lister.list(empty)).toHaveLength(6);
    expect(empty.calls).toBe(0);
    const selective = new EqualsSelector({ app: 'db' });
    lister.list(selective);
    expect(selective.calls).toBe(6);
  });

  it('returns the cached objects themselves in a new array each call', () => {
    const indexer = withNamespaceIndex();
    const lister = new Lister(indexer);
    const first = lister.list();
    first.length = 0;
    expect(lister.list()).toHaveLength(6);
    expect(lister.list(new EqualsSelector({ app: 'db' }))[0]).toBe(indexer.getByKey('a/db-1'));
  });
});

describe('Lister.get and byIndex', () => {
  it('gets cluster-scoped objects by name', () => {
    const lister = new Lister(withNamespaceIndex());
    expect(lister.get('node-1')?.metadata?.name).toBe('node-1');
    expect(lister.get('web-1')).toBeUndefined();
  });

  it('reads an index', () => {
    const lister = new Lister(withNamespaceIndex());
    expect(keysOf(lister.byIndex(NAMESPACE_INDEX, 'b'))).toEqual(['b/nolabels', 'b/web-1']);
    expect(() => lister.byIndex('nope', 'x')).toThrow(expect.objectContaining({ code: ErrorCodes.INDEX }));
  });

  it('exposes no way to write the cache', () => {
    const lister = new Lister(withNamespaceIndex()) as unknown as Record<string, unknown>;
    for (const method of ['add', 'update', 'delete', 'replace', 'addIndexers', 'indexer'])
      expect(lister[method]).toBeUndefined();
  });
});

describe('Lister.namespace', () => {
  it('lists one namespace, with and without a selector', () => {
    const lister = new Lister(withNamespaceIndex());
    expect(keysOf(lister.namespace('a').list())).toEqual(['a/db-1', 'a/web-1', 'a/web-2']);
    expect(keysOf(lister.namespace('a').list(new EqualsSelector({ app: 'web' })))).toEqual([
      'a/web-1',
      'a/web-2',
    ]);
    expect(keysOf(lister.namespace('b').list(new EqualsSelector({ app: 'web' })))).toEqual(['b/web-1']);
    expect(lister.namespace('empty').list()).toEqual([]);
    expect(lister.namespace('a').namespaceName).toBe('a');
  });

  it('treats the empty namespace as all namespaces', () => {
    const lister = new Lister(withNamespaceIndex());
    expect(lister.namespace('').list()).toHaveLength(6);
    expect(keysOf(lister.namespace('').list(new EqualsSelector({ tier: 'front' })))).toEqual([
      'a/web-1',
      'b/web-1',
    ]);
    expect(lister.namespace('').get('node-1')?.metadata?.name).toBe('node-1');
  });

  it('gets objects by name within the namespace', () => {
    const lister = new Lister(withNamespaceIndex());
    expect(lister.namespace('b').get('web-1')?.metadata?.namespace).toBe('b');
    expect(lister.namespace('a').get('nolabels')).toBeUndefined();
  });

  it('uses the namespace index when there is one', () => {
    const { indexer, calls } = recording(withNamespaceIndex());
    const { logger, seen } = lines();
    expect(keysOf(new Lister(indexer, { logger }).namespace('a').list())).toEqual([
      'a/db-1',
      'a/web-1',
      'a/web-2',
    ]);
    expect(calls).toContainEqual(['byIndex', [NAMESPACE_INDEX, 'a']]);
    expect(calls.map(([method]) => method)).not.toContain('list');
    expect(seen).toEqual([]);
  });

  it('falls back to a scan without a namespace index, warning once', () => {
    const indexer = newIndexer<KubeObject>();
    fill(indexer);
    const { logger, seen } = lines();
    const lister = new Lister(indexer, { logger });
    expect(keysOf(lister.namespace('a').list())).toEqual(['a/db-1', 'a/web-1', 'a/web-2']);
    expect(keysOf(lister.namespace('b').list(new EqualsSelector({ app: 'web' })))).toEqual(['b/web-1']);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ component: 'lister', index: NAMESPACE_INDEX });
  });

  it('starts using a namespace index added later', () => {
    const plain = newIndexer<KubeObject>();
    fill(plain);
    const { indexer, calls } = recording(plain);
    const lister = new Lister(indexer, { logger: lines().logger });
    expect(keysOf(lister.namespace('b').list())).toEqual(['b/nolabels', 'b/web-1']);
    expect(calls.map(([method]) => method)).toContain('list');
    indexer.addIndexers({ [NAMESPACE_INDEX]: metaNamespaceIndexFunc });
    calls.length = 0;
    expect(keysOf(lister.namespace('b').list())).toEqual(['b/nolabels', 'b/web-1']);
    expect(calls.map(([method]) => method)).not.toContain('list');
    expect(calls).toContainEqual(['byIndex', [NAMESPACE_INDEX, 'b']]);
  });

  it('sees writes made after it was created (a view, not a copy)', () => {
    const indexer = withNamespaceIndex();
    const ns = new Lister(indexer).namespace('c');
    expect(ns.list()).toEqual([]);
    indexer.add(obj('c', 'late'));
    expect(keysOf(ns.list())).toEqual(['c/late']);
    expect(ns.get('late')?.metadata?.name).toBe('late');
  });
});

describe('Lister with text and object selectors (core parser)', () => {
  it('parses a text selector', () => {
    const lister = new Lister(withNamespaceIndex());
    expect(keysOf(lister.list('app=web,tier!=back'))).toEqual(['a/web-1', 'b/web-1', 'node-1']);
    expect(keysOf(lister.list('app in (db, none)'))).toEqual(['a/db-1']);
    expect(keysOf(lister.namespace('b').list('!app'))).toEqual(['b/nolabels']);
    // the same text twice (served from the one-entry parse cache) gives the same answer
    expect(keysOf(lister.list('app in (db, none)'))).toEqual(['a/db-1']);
  });

  it('treats an empty text selector as everything', () => {
    const lister = new Lister(withNamespaceIndex());
    expect(lister.list('')).toHaveLength(6);
    expect(lister.list('  ')).toHaveLength(6);
  });

  it('throws ERR_INVALID_SELECTOR for a text selector that does not parse', () => {
    const lister = new Lister(withNamespaceIndex());
    expect(() => lister.list('app in (')).toThrow(
      expect.objectContaining({ code: ErrorCodes.INVALID_SELECTOR }),
    );
  });

  it('converts the matchLabels/matchExpressions object form', () => {
    const lister = new Lister(withNamespaceIndex());
    expect(
      keysOf(
        lister.list({ matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'Exists' }] }),
      ),
    ).toEqual(['a/web-1', 'a/web-2', 'b/web-1']);
    expect(
      keysOf(
        lister
          .namespace('a')
          .list({ matchExpressions: [{ key: 'app', operator: 'NotIn', values: ['web'] }] }),
      ),
    ).toEqual(['a/db-1']);
    expect(lister.list({})).toHaveLength(6);
  });
});
