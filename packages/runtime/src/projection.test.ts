import fc from 'fast-check';
import type { V1Pod } from '@kubernetes/client-node';
import { project } from './projection.js';
import type { Projected } from './projection.js';

const pod: V1Pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name: 'web-1',
    namespace: 'default',
    resourceVersion: '7',
    uid: 'u-1',
    labels: { app: 'web' },
    managedFields: [{ manager: 'kubelet' }],
  },
  spec: { nodeName: 'node-1', containers: [{ name: 'c', image: 'nginx' }] },
  status: { phase: 'Running', podIP: '10.0.0.1' },
};

describe('project', () => {
  it('keeps exactly the listed fields and the identity metadata', () => {
    const nodes = project<V1Pod>()(['spec.nodeName', 'metadata.labels', 'status.phase']);
    expect(nodes(pod)).toEqual({
      metadata: { name: 'web-1', namespace: 'default', resourceVersion: '7', labels: { app: 'web' } },
      spec: { nodeName: 'node-1' },
      status: { phase: 'Running' },
    });
    expect(nodes.paths).toEqual(['spec.nodeName', 'metadata.labels', 'status.phase']);
  });

  it('the projected type has the kept fields and not the dropped ones', () => {
    const nodes = project<V1Pod>()(['spec.nodeName']);
    const p: Projected<V1Pod, 'spec.nodeName'> = nodes(pod);
    const node: string | undefined = p.spec?.nodeName;
    const name: string | undefined = p.metadata?.name;
    // @ts-expect-error spec.containers was dropped
    void p.spec?.containers;
    // @ts-expect-error status was dropped
    void p.status;
    // @ts-expect-error not a path of V1Pod
    project<V1Pod>()(['spec.nodeNme']);
    expect([node, name]).toEqual(['node-1', 'web-1']);
  });

  it('never keeps a field outside the listed paths (property)', () => {
    const paths = ['metadata.labels', 'spec.nodeName', 'status'] as const;
    const keep = project<V1Pod>()(paths);
    fc.assert(
      fc.property(
        fc.record({
          name: fc.string(),
          extra: fc.dictionary(fc.string({ minLength: 1 }), fc.string()),
          nodeName: fc.option(fc.string(), { nil: undefined }),
          hostname: fc.option(fc.string(), { nil: undefined }),
        }),
        ({ name, extra, nodeName, hostname }) => {
          const input = {
            metadata: { name, annotations: extra, uid: 'x' },
            spec: {
              containers: [],
              ...(nodeName === undefined ? {} : { nodeName }),
              ...(hostname === undefined ? {} : { hostname }),
            },
          } as V1Pod;
          const out = keep(input) as Record<string, Record<string, unknown>>;
          expect(Object.keys(out['metadata'] ?? {})).toEqual(['name']);
          expect(out['spec']).toEqual(nodeName === undefined ? {} : { nodeName });
          expect(Object.keys(out).sort()).toEqual(['metadata', 'spec']);
        },
      ),
    );
  });

  it('rejects an empty path list with ERR_INVALID_OPTION', () => {
    expect(() => project<V1Pod>()([])).toThrow(expect.objectContaining({ code: 'ERR_INVALID_OPTION' }));
  });
});
