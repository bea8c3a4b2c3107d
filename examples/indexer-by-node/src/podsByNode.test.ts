import { runIndexerByNode, BY_NODE, podsByNode } from './podsByNode.js';

describe('the indexer-by-node example', () => {
  it('answers byIndex, listIndexFuncValues and a namespace lister from the cache, and follows a pod that moves', async () => {
    const lines: string[] = [];
    const result = await runIndexerByNode({ log: (line) => lines.push(line) });

    // listIndexFuncValues: the unscheduled pod (search/indexer-1) is in no bucket.
    expect(result.nodes).toEqual(['node-a', 'node-b', 'node-c']);
    expect(result.podsByNode).toEqual({
      'node-a': ['shop/cart-1', 'shop/web-1'],
      'node-b': ['search/web-1', 'shop/web-2'],
      'node-c': ['search/indexer-0', 'shop/db-0'],
    });
    // The namespace lister with `tier=frontend` in `shop`.
    expect(result.selected).toEqual(['web-1', 'web-2']);
    // The pod moved node-a → node-c: the index followed, and was already up to date inside the handler.
    expect(result.move).toEqual({
      key: 'shop/web-1',
      from: 'node-a',
      to: 'node-c',
      indexedInHandler: true,
      after: { 'node-a': ['shop/cart-1'], 'node-c': ['search/indexer-0', 'shop/db-0', 'shop/web-1'] },
    });
    expect(lines).toContain('synced 7 pods');
    expect(lines).toContain('indexKeys(byNode, node-a) = shop/cart-1, shop/web-1');
    expect(lines).toContain('onUpdate: shop/web-1 moved node-a → node-c');
  });

  it('indexes a pod under its node, and an unscheduled pod nowhere', () => {
    expect(BY_NODE).toBe('byNode');
    expect(podsByNode({ metadata: { name: 'p' }, spec: { nodeName: 'n1', containers: [] } })).toEqual(['n1']);
    expect(podsByNode({ metadata: { name: 'p' }, spec: { containers: [] } })).toEqual([]);
    expect(podsByNode({ metadata: { name: 'p' } })).toEqual([]);
  });
});
