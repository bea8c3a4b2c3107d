import fc from 'fast-check';
import { createLogger, ErrorCodes, KinformerError, realClock, splitHashSpace } from '@kinformer/core';
import { shardRangeLocator } from '@kinformer/core/internal';
import type { KubeObject } from '@kinformer/core';
import type { V1Secret } from '@kubernetes/client-node';
import { HASH_RANGE_LABEL, HashSharding, hashRangeOf } from './hashSharding.js';
import { rangeLabellingWriter } from './rangeLabelling.js';
import { kinds } from './kinds.js';
import type { ManagedController } from './managedController.js';
import { setControllerReference } from './ownerReferences.js';
import type { ObjectWriter } from './runtimeClient.js';

// The range label of owned objects (hashSharding, field 'uid'): what the Manager's client stamps on
// an object whose controller owner is of a sharded primary kind. The FakeApiServer tests
// (hashSharding.test.ts) show the informers that read it; these pin the label itself.

function sharding(virtualRanges: number, field: 'uid' | 'namespace' = 'uid'): HashSharding {
  const hs = new HashSharding(
    { name: 'cms', namespace: 'default', virtualRanges, field },
    {
      identity: 'r0',
      clock: realClock,
      logger: createLogger({ level: 'error' }),
      store: {
        list: () => Promise.resolve([]),
        create: (lease) => Promise.resolve(lease),
        update: (lease) => Promise.resolve(lease),
      },
      rangeInformer: () => {
        throw new Error('not started in these tests');
      },
    },
  );
  hs.addController(kinds.configMaps, {} as unknown as ManagedController<KubeObject>, []);
  return hs;
}

function owner(uid: string): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'owner', namespace: 'default', uid } };
}

function deepFreeze<T>(obj: T): T {
  if (obj !== null && typeof obj === 'object') {
    for (const v of Object.values(obj)) deepFreeze(v);
    Object.freeze(obj);
  }
  return obj;
}

function ownedSecret(uid: string, labels?: Record<string, string>): V1Secret {
  const secret: V1Secret = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 's', namespace: 'default', ...(labels === undefined ? {} : { labels }) },
  };
  return deepFreeze(setControllerReference(owner(uid), secret, kinds.configMaps));
}

/** A writer over a recorder of what it was asked to write (verb and body), stamping with `stamp`. */
function recordingWriter(stamp: <T extends KubeObject>(obj: T) => T): {
  writer: ObjectWriter;
  seen: Array<[string, unknown]>;
} {
  const seen: Array<[string, unknown]> = [];
  const record =
    (verb: string, body: 1 | 2) =>
    (...args: unknown[]): Promise<never> => {
      seen.push([verb, args[body]]);
      return Promise.resolve(args[body] as never);
    };
  const inner = {
    get: record('get', 1),
    create: record('create', 1),
    update: record('update', 1),
    updateStatus: record('updateStatus', 1),
    patch: record('patch', 2),
    patchStatus: record('patchStatus', 2),
    apply: record('apply', 1),
    delete: record('delete', 1),
  } as unknown as ObjectWriter;
  return { writer: rangeLabellingWriter(inner, stamp), seen };
}

describe('the hash range label of owned objects', () => {
  it('is the owner uid’s range among virtualRanges; the input is never changed; stamping twice is stamping once', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1 }),
        fc.integer({ min: 1, max: 64 }),
        fc.dictionary(fc.constantFrom('app', 'tier', HASH_RANGE_LABEL), fc.string({ maxLength: 5 })),
        (uid, v, labels) => {
          const hs = sharding(v);
          const input = ownedSecret(uid, labels);
          const stamped = hs.stamp(input);
          const range = shardRangeLocator(splitHashSpace(v))(uid);
          expect(hashRangeOf(uid, v)).toBe(range);
          expect(stamped.metadata?.labels?.[HASH_RANGE_LABEL]).toBe(String(range));
          // Other labels are kept; a wrong range label is replaced; the frozen input is untouched.
          for (const [k, value] of Object.entries(labels))
            if (k !== HASH_RANGE_LABEL) expect(stamped.metadata?.labels?.[k]).toBe(value);
          expect(input.metadata?.labels).toEqual(labels);
          expect(hs.stamp(stamped)).toBe(stamped);
        },
      ),
    );
  });

  it('leaves alone objects without a controller owner of a sharded kind, and every object with field namespace', () => {
    const hs = sharding(16);
    const byDeployment = deepFreeze(
      setControllerReference(
        {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name: 'd', namespace: 'default', uid: 'u1' },
        },
        { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'default' } },
      ),
    );
    expect(hs.stamp(byDeployment)).toBe(byDeployment);
    const orphan = deepFreeze({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' } });
    expect(hs.stamp(orphan)).toBe(orphan);
    const inNamespace = ownedSecret('u2');
    expect(sharding(16, 'namespace').stamp(inNamespace)).toBe(inNamespace);
  });

  it('the Manager’s writer stamps what it creates, updates and applies, not status writes', async () => {
    const hs = sharding(16);
    const { writer, seen } = recordingWriter((obj) => hs.stamp(obj));
    const secret = ownedSecret('u3');
    const label = String(hashRangeOf('u3', 16));
    await writer.create(kinds.secrets, secret);
    await writer.update(kinds.secrets, secret);
    await writer.apply(kinds.secrets, secret);
    await writer.updateStatus(kinds.secrets, secret);
    await writer.patchStatus(kinds.secrets, { name: 's' }, secret);
    const labelOf = (o: unknown): string | undefined =>
      (o as KubeObject).metadata?.labels?.[HASH_RANGE_LABEL];
    expect(seen.map(([verb, o]) => [verb, labelOf(o)])).toEqual([
      ['create', label],
      ['update', label],
      ['apply', label],
      ['updateStatus', undefined],
      ['patchStatus', undefined],
    ]);
  });

  describe('patches that set a controller reference', () => {
    const hs = sharding(16);
    const label = String(hashRangeOf('u4', 16));
    const ref = ownedSecret('u4').metadata!.ownerReferences![0]!;
    const otherRef = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'd', uid: 'u5', controller: true };
    const patched = async (patch: unknown, type?: 'merge' | 'strategic' | 'json'): Promise<unknown> => {
      const { writer, seen } = recordingWriter((obj) => hs.stamp(obj));
      deepFreeze(patch);
      await writer.patch(kinds.secrets, { name: 's' }, patch, type === undefined ? {} : { type });
      return seen[0]![1];
    };

    it.each([undefined, 'merge', 'strategic'] as const)(
      '%s patch: the range label is added to the patch body, its other labels kept',
      async (type) => {
        expect(await patched({ metadata: { ownerReferences: [ref] } }, type)).toEqual({
          metadata: { ownerReferences: [ref], labels: { [HASH_RANGE_LABEL]: label } },
        });
        expect(
          await patched(
            { metadata: { ownerReferences: [ref], labels: { app: 'x', [HASH_RANGE_LABEL]: '99' } } },
            type,
          ),
        ).toEqual({ metadata: { ownerReferences: [ref], labels: { app: 'x', [HASH_RANGE_LABEL]: label } } });
      },
    );

    it.each([
      ['no owner references', { metadata: { annotations: { a: '1' } } }],
      ['owner references removed', { metadata: { ownerReferences: null } }],
      ['a controller of a kind that is not sharded', { metadata: { ownerReferences: [otherRef] } }],
      ['a non-controller reference', { metadata: { ownerReferences: [{ ...ref, controller: false }] } }],
      [
        'the right label already',
        { metadata: { ownerReferences: [ref], labels: { [HASH_RANGE_LABEL]: label } } },
      ],
      [
        'a strategic-merge delete directive',
        { metadata: { ownerReferences: [{ ...ref, $patch: 'delete' }] } },
      ],
      ['a malformed reference', { metadata: { ownerReferences: [{ controller: true, uid: 7 }] } }],
      // Adding the label would turn "delete every label" into a merge that keeps them.
      ['every label deleted', { metadata: { ownerReferences: [ref], labels: null } }],
      ['labels that are not a map', { metadata: { ownerReferences: [ref], labels: 'x' } }],
      ['not an object', 'x'],
    ])('merge patch with %s: sent as it is', async (_, patch) => {
      expect(await patched(patch)).toBe(patch);
      expect(await patched(patch, 'strategic')).toBe(patch);
    });

    const labelOp = { op: 'add', path: '/metadata/labels/kinformer.dev~1hash-range', value: label };
    const setsRefs = [
      ['the whole array', { op: 'add', path: '/metadata/ownerReferences', value: [ref] }],
      ['an appended reference', { op: 'add', path: '/metadata/ownerReferences/-', value: ref }],
      ['a reference at an index', { op: 'replace', path: '/metadata/ownerReferences/0', value: ref }],
      ['the metadata', { op: 'add', path: '/metadata', value: { name: 's', ownerReferences: [ref] } }],
    ] as const;
    const ensureLabels = [
      ['adds the labels map', { op: 'add', path: '/metadata/labels', value: { app: 'x' } }],
      ['adds a label', { op: 'add', path: '/metadata/labels/app', value: 'x' }],
      ['removes a label', { op: 'remove', path: '/metadata/labels/app' }],
      ['tests a label', { op: 'test', path: '/metadata/labels/app', value: 'x' }],
      ['tests the map', { op: 'test', path: '/metadata/labels', value: { app: 'x' } }],
      ['copies a label', { op: 'copy', from: '/metadata/labels/app', path: '/metadata/annotations/app' }],
    ] as const;

    it.each(
      setsRefs.flatMap(([what, set]) =>
        ensureLabels.map(([how, ensure]) => [what, how, set, ensure] as const),
      ),
    )(
      'JSON patch setting %s, that %s: one add of the label is appended',
      async (_what, _how, set, ensure) => {
        // Written after the labels, a whole `/metadata` without labels drops them: that order is not stamped.
        const orders =
          set.path === '/metadata'
            ? [[set, ensure]]
            : [
                [set, ensure],
                [ensure, set],
              ];
        for (const ops of orders) {
          expect(await patched(ops, 'json')).toEqual([...ops, labelOp]);
          // Stamping twice is stamping once.
          expect(await patched([...ops, labelOp], 'json')).toEqual([...ops, labelOp]);
        }
      },
    );

    it('JSON patch writing the labels map within the metadata it writes: the label is appended', async () => {
      const set = { op: 'replace', path: '/metadata', value: { ownerReferences: [ref], labels: {} } };
      expect(await patched([set], 'json')).toEqual([set, labelOp]);
    });

    const set = setsRefs[1][1];
    it.each([
      // No operation sequence is right for an object with and without a labels map: sent as it is.
      ['does not make sure the labels map exists', [set]],
      [
        'removes the labels map after adding it',
        [ensureLabels[0][1], set, { op: 'remove', path: '/metadata/labels' }],
      ],
      [
        'moves the labels map away',
        [ensureLabels[1][1], set, { op: 'move', from: '/metadata/labels', path: '/x' }],
      ],
      [
        'writes a labels value that is not a map',
        [set, { op: 'add', path: '/metadata/labels', value: null }],
      ],
      [
        'removes the owner references after',
        [ensureLabels[0][1], set, { op: 'remove', path: '/metadata/ownerReferences' }],
      ],
      ['sets a controller of a kind that is not sharded', [ensureLabels[0][1], { ...set, value: otherRef }]],
      ['writes metadata without labels after the labels map', [ensureLabels[0][1], setsRefs[3][1]]],
      ['sets no controller', [ensureLabels[0][1], { ...set, value: { ...ref, controller: false } }]],
      ['only touches labels', [ensureLabels[0][1]]],
      ['has a malformed operation', [ensureLabels[0][1], set, 'x']],
    ])('JSON patch that %s: sent as it is', async (_, ops) => {
      expect(await patched(ops, 'json')).toBe(ops);
    });

    it('with field namespace nothing is stamped', async () => {
      const { writer, seen } = recordingWriter((obj) => sharding(16, 'namespace').stamp(obj));
      const merge = { metadata: { ownerReferences: [ref] } };
      const json = [ensureLabels[0][1], set];
      await writer.patch(kinds.secrets, { name: 's' }, merge);
      await writer.patch(kinds.secrets, { name: 's' }, json, { type: 'json' });
      expect(seen.map(([, body]) => body)).toEqual([merge, json]);
      expect(seen[0]![1]).toBe(merge);
      expect(seen[1]![1]).toBe(json);
    });
  });

  it('hashRangeOf refuses a range count the ring refuses', () => {
    for (const v of [0, 1025, 2.5]) {
      expect(() => hashRangeOf('u', v)).toThrow(KinformerError);
      expect(() => hashRangeOf('u', v)).toThrow(expect.objectContaining({ code: ErrorCodes.INVALID_OPTION }));
    }
  });
});
