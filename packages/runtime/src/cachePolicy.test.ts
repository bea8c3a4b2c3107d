import { ObjectClient } from '@kinformer/client-node';
import { ErrorCodes } from '@kinformer/core';
import { captureLogs, LEVEL, serverPod, waitFor } from '@kinformer/test-tools';
import type { V1ConfigMap, V1Deployment, V1Pod, V1Secret } from '@kubernetes/client-node';
import { kinds } from './kinds.js';
import { project } from './projection.js';
import type { ObjectWriter } from './runtimeClient.js';
import { perTestEnv, recordKeys } from './testEnv.test.helpers.js';

function secret(name: string, namespace: string): V1Secret {
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace }, data: { k: 'dg==' } };
}

describe('Manager cache policy', () => {
  const env = perTestEnv();

  /** The Manager's client over HTTP, recording its GETs (what it reads uncached kinds with). */
  function serverReader(gets: string[]): ObjectWriter {
    const c = new ObjectClient(env.kubeConfig, { fieldManager: 'test' });
    return {
      get(kind, key, options) {
        gets.push(`${kind.resource} ${key.namespace ?? ''}/${key.name}`);
        return c.get(kind, key, options);
      },
      create: (kind, obj, options) => c.create(kind, obj, options),
      update: (kind, obj, options) => c.update(kind, obj, options),
      updateStatus: (kind, obj, options) => c.updateStatus(kind, obj, options),
      patch: (kind, key, patch, options) => c.patch(kind, key, patch, options),
      patchStatus: (kind, key, patch, options) => c.patchStatus(kind, key, patch, options),
      apply: (kind, obj, options) => c.apply(kind, obj, options),
      delete: (kind, key, options) => c.delete(kind, key, options),
    };
  }

  it('caches a kind only in its listed namespaces, one namespaced watch each, behind one read view', async () => {
    env.server.create(kinds.secrets, secret('a', 'ops'));
    env.server.create(kinds.secrets, secret('b', 'infra'));
    env.server.create(kinds.secrets, secret('bomb', 'tenant'));
    const mgr = env.manager({ cache: { byKind: [{ kind: kinds.secrets, namespaces: ['ops', 'infra'] }] } });
    const seen = recordKeys(mgr, kinds.secrets);
    env.run(mgr);
    await waitFor(() => seen.length >= 2);
    expect(seen.sort()).toEqual(['infra/b', 'ops/a']);
    expect(mgr.get(kinds.secrets, 'ops/a')?.metadata?.name).toBe('a');
    expect(mgr.get(kinds.secrets, 'infra/b')?.metadata?.name).toBe('b');
    expect(() => mgr.get(kinds.secrets, 'tenant/bomb')).toThrow(
      expect.objectContaining({
        code: 'ERR_KIND_NOT_CACHED',
        details: { kind: 'secrets.v1', namespace: 'tenant' },
      }),
    );
    const lists = env.server.requests.filter((r) => r.resource === 'secrets' && r.verb === 'list');
    expect(lists.map((r) => r.path).sort()).toEqual([
      '/api/v1/namespaces/infra/secrets',
      '/api/v1/namespaces/ops/secrets',
    ]);
    expect(() => mgr.informer(kinds.secrets)).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_OPTION' }),
    );
    expect(() => mgr.informer(kinds.secrets, { namespace: 'tenant' })).toThrow(
      expect.objectContaining({ code: 'ERR_INVALID_OPTION' }),
    );
  });

  it('an uncached kind is read from the API server by mgr.read and ctx.object, and mgr.get names mgr.read', async () => {
    env.server.create(kinds.configMaps, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c', namespace: 'default' },
      data: { v: '1' },
    } satisfies V1ConfigMap);
    const gets: string[] = [];
    const mgr = env.manager({
      writer: serverReader(gets),
      cache: { byKind: [{ kind: kinds.configMaps, uncached: true }] },
    });
    const objects: Array<string | undefined> = [];
    mgr
      .controller('cm')
      .for(kinds.configMaps)
      .reconcile((ctx) => {
        objects.push(ctx.object?.data?.['v']);
      });
    env.run(mgr);
    await waitFor(() => objects.length >= 1);
    // The full object came from a GET; the informer that feeds the keys holds metadata only.
    expect(objects).toEqual(['1']);
    expect(gets).toEqual(['configmaps default/c']);
    const cachedCopy = mgr.informer(kinds.configMaps).lister.list()[0];
    expect(cachedCopy?.metadata?.name).toBe('c');
    expect(cachedCopy?.data).toBeUndefined();
    expect((await mgr.read(kinds.configMaps, 'default/c'))?.data).toEqual({ v: '1' });
    expect(await mgr.read(kinds.configMaps, 'default/missing')).toBeUndefined();
    // A malformed key is the core key error, not a GET of a name with a slash in it.
    const getsBefore = gets.length;
    await expect(mgr.read(kinds.configMaps, 'default/a/b')).rejects.toMatchObject({
      code: ErrorCodes.INVALID_KEY,
    });
    expect(gets).toHaveLength(getsBefore);
    expect(() => mgr.get(kinds.configMaps, 'default/c')).toThrow(
      expect.objectContaining({ code: 'ERR_KIND_NOT_CACHED', message: expect.stringContaining('mgr.read') }),
    );
  });

  it('a read of a kind with no informer and no policy is ERR_KIND_NOT_CACHED naming the kind and the option, and starts nothing', async () => {
    const mgr = env.manager();
    mgr.informer(kinds.configMaps);
    env.run(mgr);
    await waitFor(() => env.server.requests.some((r) => r.resource === 'configmaps' && r.verb === 'watch'));
    let error: unknown;
    try {
      mgr.get(kinds.secrets, 'default/x');
    } catch (err) {
      error = err;
    }
    expect(error).toMatchObject({ code: 'ERR_KIND_NOT_CACHED', details: { kind: 'secrets.v1' } });
    expect((error as Error).message).toContain('cache.byKind');
    await expect(mgr.read(kinds.secrets, 'default/x')).rejects.toMatchObject({ code: 'ERR_KIND_NOT_CACHED' });
    expect(env.server.requests.filter((r) => r.resource === 'secrets')).toEqual([]);
  });

  it('drops managedFields by default and keeps them for a kind that opts out', async () => {
    const managedFields = [{ manager: 'kubectl', operation: 'Apply', fieldsType: 'FieldsV1', fieldsV1: {} }];
    env.server.create(kinds.configMaps, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c', namespace: 'default', managedFields },
    });
    env.server.create(kinds.secrets, {
      ...secret('s', 'default'),
      metadata: { name: 's', namespace: 'default', managedFields },
    });
    const logs = captureLogs('info');
    const mgr = env.manager({
      logger: logs.logger,
      cache: { byKind: [{ kind: kinds.secrets, stripManagedFields: false }] },
    });
    mgr.informer(kinds.configMaps);
    mgr.informer(kinds.secrets);
    env.run(mgr);
    await waitFor(() => mgr.readyChecks()[1]!.check() === undefined);
    const cm = mgr.get(kinds.configMaps, 'default/c');
    expect(cm?.metadata?.name).toBe('c');
    expect(cm?.metadata?.managedFields).toBeUndefined();
    expect(mgr.get(kinds.secrets, 'default/s')?.metadata?.managedFields).toHaveLength(1);
    expect(logs.lines.filter((l) => l.msg.includes('managedFields'))).toHaveLength(1);
  });

  it('applies the policy selectors and a projection, and a projected informer is typed by it', async () => {
    env.server.create(kinds.pods, serverPod('p1', { nodeName: 'n1', labels: { app: 'web' } }));
    env.server.create(kinds.pods, {
      ...serverPod('p2', { nodeName: 'n2', labels: { app: 'web' } }),
      metadata: { name: 'p2', namespace: 'default', labels: { app: 'db' } },
    });
    const nodes = project<V1Pod>()(['spec.nodeName']);
    const mgr = env.manager({
      cache: { byKind: [{ kind: kinds.pods, labelSelector: 'app=web', transform: nodes }] },
    });
    const { lister } = mgr.informer(kinds.pods, { transform: nodes });
    mgr.informer(kinds.pods);
    env.run(mgr);
    await waitFor(() => mgr.readyChecks()[1]!.check() === undefined);
    const cached = lister.list();
    expect(cached).toEqual([
      {
        metadata: { name: 'p1', namespace: 'default', resourceVersion: expect.any(String) },
        spec: { nodeName: 'n1' },
      },
    ]);
    const node: string | undefined = cached[0]?.spec?.nodeName;
    expect(node).toBe('n1');
    // The policy transform applies to the plain informer too, and both ask only for app=web.
    expect(mgr.get(kinds.pods, 'default/p1')).toEqual(cached[0]);
    const lists = env.server.requests.filter((r) => r.resource === 'pods' && r.verb === 'list');
    expect(lists.map((r) => r.query['labelSelector'])).toEqual(['app=web', 'app=web']);
  });

  it('shares a full informer with a metadata-only request, and warns once when a kind is cached twice in one scope', () => {
    const logs = captureLogs('warn');
    const mgr = env.manager({ logger: logs.logger });
    const full = mgr.informer(kinds.configMaps);
    expect(mgr.informer(kinds.configMaps, { metadataOnly: true })).toBe(full);
    mgr.informer(kinds.deployments, { metadataOnly: true });
    mgr.informer(kinds.deployments);
    mgr.informer(kinds.deployments, {
      transform: project<V1Deployment>()(['spec.replicas']),
    });
    const warnings = logs.lines.filter((l) => l.level === LEVEL.warn && l.msg.includes('cached twice'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.msg).toContain('deployments.v1.apps');
    expect(warnings[0]!.msg).toContain('metadata-only and full');
  });

  it('rejects contradictory policies with ERR_INVALID_OPTION', () => {
    for (const byKind of [
      [{ kind: kinds.secrets }, { kind: kinds.secrets }],
      [{ kind: kinds.secrets, uncached: true, namespaces: ['a'] }],
      [{ kind: kinds.nodes, namespaces: ['a'] }],
      [{ kind: kinds.secrets, namespaces: [] }],
    ]) {
      expect(() => env.manager({ cache: { byKind } })).toThrow(
        expect.objectContaining({ code: 'ERR_INVALID_OPTION' }),
      );
    }
  });
});
