import fc from 'fast-check';
import { createLogger, ErrorCodes, KinformerError, realClock, splitHashSpace } from '@kinformer/core';
import { shardRangeLocator } from '@kinformer/core/internal';
import type { KubeObject } from '@kinformer/core';
import type { V1Secret } from '@kubernetes/client-node';
import { HASH_RANGE_LABEL, HashSharding, hashRangeOf, rangeLabellingWriter } from './hashSharding.js';
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

  it('the Manager’s writer stamps what it creates, updates and applies, not patches or status writes', async () => {
    const hs = sharding(16);
    const seen: Array<[string, unknown]> = [];
    const record =
      (verb: string) =>
      (...args: unknown[]): Promise<never> => {
        seen.push([verb, args[1]]);
        return Promise.resolve(args[1] as never);
      };
    const inner = {
      get: record('get'),
      create: record('create'),
      update: record('update'),
      updateStatus: record('updateStatus'),
      patch: record('patch'),
      patchStatus: record('patchStatus'),
      apply: record('apply'),
      delete: record('delete'),
    } as unknown as ObjectWriter;
    const writer = rangeLabellingWriter(inner, (obj) => hs.stamp(obj));
    const secret = ownedSecret('u3');
    const label = String(hashRangeOf('u3', 16));
    await writer.create(kinds.secrets, secret);
    await writer.update(kinds.secrets, secret);
    await writer.apply(kinds.secrets, secret);
    await writer.updateStatus(kinds.secrets, secret);
    await writer.patch(kinds.secrets, { name: 's' }, secret);
    const labelOf = (o: unknown): string | undefined =>
      (o as KubeObject).metadata?.labels?.[HASH_RANGE_LABEL];
    expect(seen.map(([verb, o]) => [verb, labelOf(o)])).toEqual([
      ['create', label],
      ['update', label],
      ['apply', label],
      ['updateStatus', undefined],
      ['patch', undefined],
    ]);
  });

  it('hashRangeOf refuses a range count the ring refuses', () => {
    for (const v of [0, 1025, 2.5]) {
      expect(() => hashRangeOf('u', v)).toThrow(KinformerError);
      expect(() => hashRangeOf('u', v)).toThrow(expect.objectContaining({ code: ErrorCodes.INVALID_OPTION }));
    }
  });
});
