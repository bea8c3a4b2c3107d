import { runWidgets } from './watchWidgets.js';

describe('the crd example', () => {
  it('watches widgets with a typed informer and a metadata-only one, without managedFields', async () => {
    const lines: string[] = [];
    const result = await runWidgets({ log: (line) => lines.push(line) });

    // The handler saw the initial list, then each change in order.
    expect(result.events).toEqual([
      'add default/blue blue size 1 (initial list)',
      'add default/red red size 5 (initial list)',
      'add default/green green size 2',
      'update default/blue size 1 → 3',
      'delete default/red',
    ]);
    // The transform dropped managedFields before caching.
    expect(result.widgets).toEqual([
      { key: 'default/blue', color: 'blue', size: 3, managedFields: false },
      { key: 'default/green', color: 'green', size: 2, managedFields: false },
    ]);
    // The metadata-only informer caches PartialObjectMetadata: labels yes, spec no.
    expect(result.metadata).toEqual([
      { key: 'default/blue', kind: 'PartialObjectMetadata', labels: { color: 'blue' }, hasSpec: false },
      { key: 'default/green', kind: 'PartialObjectMetadata', labels: { color: 'green' }, hasSpec: false },
    ]);
    expect(lines).toContain('synced: widgets.v1.example.com ✓, widgets.v1.example.com?metadataOnly=true ✓');
  });
});
