import { DeletedFinalStateUnknown, parseLabelSelector } from '@kinformer/core';
import type { KubeObject } from '@kinformer/core';
import { pod } from '@kinformer/test-tools';
import { HandlerRecorder, labelsOf } from './handlerRecorder.js';

// The stream checker must catch every kind of inconsistency it claims to: a checker that cannot fail
// would make the soak's "0 mismatches" meaningless.

/** The fast recorder's handler calls are synchronous: call them and drop the (absent) promise. */
function add(r: HandlerRecorder, obj: KubeObject, initial = false): void {
  void r.handler.onAdd!(obj, initial);
}
function update(r: HandlerRecorder, oldObj: KubeObject, newObj: KubeObject): void {
  void r.handler.onUpdate!(oldObj, newObj);
}
function del(r: HandlerRecorder, obj: KubeObject | DeletedFinalStateUnknown<KubeObject>): void {
  void r.handler.onDelete!(obj);
}

function recorder(scope: ConstructorParameters<typeof HandlerRecorder>[0]['scope'] = {}): HandlerRecorder {
  return new HandlerRecorder({ where: 'test / fast', scope, slow: false });
}

test('a consistent stream (add, updates, delete, re-add, tombstone) has no violation and ends in the final state', () => {
  const r = recorder();
  add(r, pod('a', '2'), true);
  update(r, pod('a', '2'), pod('a', '5'));
  update(r, pod('a', '5'), pod('a', '5')); // a relist of an unchanged object: same version is fine
  del(r, pod('a', '7'));
  add(r, pod('a', '9'));
  add(r, pod('b', '3'));
  del(r, new DeletedFinalStateUnknown('default/b', pod('b', '3')));
  expect(r.violations).toBe(0);
  expect(r.events).toEqual({ add: 3, update: 2, delete: 2, tombstones: 1, initialAdds: 1 });
  expect(r.checkFinal(new Map([['default/a', pod('a', '9')]]))).toBe(1);
  expect(r.violations).toBe(0);
});

test('a version going back is caught on add, update and delete', () => {
  const r = recorder();
  add(r, pod('a', '10'));
  update(r, pod('a', '10'), pod('a', '8'));
  del(r, pod('a', '4'));
  add(r, pod('a', '2'));
  expect(r.violationCounts['rv-went-back']).toBe(3);
  expect(r.samples[0]).toMatchObject({
    kind: 'rv-went-back',
    key: 'default/a',
    detail: 'update to rv 8 after rv 10',
  });
});

test('a lost event shows as an update whose old object is not the last one seen', () => {
  const r = recorder();
  add(r, pod('a', '2'));
  // The update to rv 4 never reached the handler.
  update(r, pod('a', '4'), pod('a', '6'));
  expect(r.violationCounts).toEqual({ 'old-not-last-seen': 1 });
});

test('event types that contradict the stream (lost delete, lost add, double delete) are caught', () => {
  const r = recorder();
  add(r, pod('a', '2'));
  add(r, pod('a', '3'));
  update(r, pod('b', '4'), pod('b', '5'));
  del(r, pod('c', '6'));
  del(r, pod('a', '7'));
  del(r, pod('a', '8'));
  expect(r.violationCounts).toEqual({
    'add-while-present': 1,
    'update-while-absent': 1,
    'delete-while-absent': 2,
  });
});

test('objects outside the namespace or the label selector are caught', () => {
  const r = recorder({ namespace: 'default', labelSelector: parseLabelSelector('app=web') });
  add(r, pod('a', '2', 'default', { metadata: { labels: { app: 'db' } } }));
  add(r, pod('b', '3', 'ns-b', { metadata: { labels: { app: 'web' } } }));
  add(r, pod('c', '4', 'default', { metadata: { labels: { app: 'web' } } }));
  expect(r.violationCounts).toEqual({ 'out-of-scope': 2 });
});

test('the final check catches a missing key, a stale version, other labels and a missing delete', () => {
  const r = recorder();
  add(r, pod('stale', '2'));
  add(r, pod('relabelled', '3', 'default', { metadata: { labels: { app: 'web' } } }));
  add(r, pod('gone', '4'));
  add(r, pod('deleted-then-back', '5'));
  del(r, pod('deleted-then-back', '6'));
  const expected = new Map<string, KubeObject>([
    ['default/stale', pod('stale', '9')],
    ['default/relabelled', pod('relabelled', '3', 'default', { metadata: { labels: { app: 'db' } } })],
    ['default/never-seen', pod('never-seen', '7')],
    ['default/deleted-then-back', pod('deleted-then-back', '8')],
  ]);
  expect(r.checkFinal(expected)).toBe(4);
  expect(r.violationCounts).toEqual({
    'final-stale': 1,
    'final-labels': 1,
    'final-missing': 2,
    'final-not-deleted': 1,
  });
});

test('the slow handler records after an await and reports calls in flight until then', async () => {
  const r = new HandlerRecorder({ where: 'test / slow', scope: {}, slow: true });
  const pending = r.handler.onAdd!(pod('a', '2'), false);
  expect(pending).toBeInstanceOf(Promise);
  expect(r.inFlight).toBe(1);
  expect(r.total).toBe(0);
  await pending;
  expect(r.inFlight).toBe(0);
  expect(r.total).toBe(1);
});

test('labelsOf is independent of key order', () => {
  expect(labelsOf(pod('a', '1', 'default', { metadata: { labels: { b: '2', a: '1' } } }))).toBe(
    labelsOf(pod('a', '1', 'default', { metadata: { labels: { a: '1', b: '2' } } })),
  );
  expect(labelsOf({ metadata: {} })).toBe('{}');
});

test('throwEvery makes every n-th call fail after recording it', async () => {
  const fast = new HandlerRecorder({ where: 'test / fast', scope: {}, slow: false, throwEvery: 2 });
  expect(() => fast.handler.onAdd!(pod('a', '2'), false)).not.toThrow();
  expect(() => fast.handler.onAdd!(pod('b', '3'), false)).toThrow('failing on purpose');
  expect(fast.total).toBe(2);
  expect(fast.thrown).toBe(1);
  const slow = new HandlerRecorder({ where: 'test / slow', scope: {}, slow: true, throwEvery: 1 });
  await expect(slow.handler.onAdd!(pod('a', '2'), false)).rejects.toThrow('failing on purpose');
  expect(slow.total).toBe(1);
  expect(slow.inFlight).toBe(0);
  expect(slow.violations).toBe(0);
});
