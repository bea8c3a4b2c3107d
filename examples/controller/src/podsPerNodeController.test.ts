import type { V1ConfigMap, V1Pod } from '@kubernetes/client-node';
import { FakeRecorder } from '@kinformer/events';
import { FakeApiServer, FakeClock, flush } from '@kinformer/testing';
import {
  ErrorCodes,
  isDeletedFinalStateUnknown,
  ItemExponentialFailureRateLimiter,
  KinformerError,
  SharedInformerFactory,
} from 'kinformer';
import { makePod, nodeName, PodChurn } from './podChurn.js';
import {
  CONTROLLER_NAME,
  configMapNameFor,
  desiredConfigMapData,
  MANAGED_BY_LABEL,
  PodsPerNodeController,
} from './podsPerNodeController.js';
import {
  configMapData,
  NS,
  startController,
  waitFor,
  waitForConvergence,
} from './testSupport.test.helpers.js';
import type { RunningController } from './testSupport.test.helpers.js';

let server: FakeApiServer;
let running: RunningController | undefined;

beforeEach(async () => {
  server = await FakeApiServer.start();
});

afterEach(async () => {
  await running?.stop();
  running = undefined;
  await server.close();
});

function attempts(node: string): number {
  return running!.records.filter((r) => r.node === node).length;
}

describe('PodsPerNodeController: reconcile', () => {
  it('after churn, every node with pods has a ConfigMap listing exactly its pods, and emptied nodes have none', async () => {
    const churn = new PodChurn(server, { nodes: 6 });
    churn.seed(120);
    running = await startController(server, { workers: 3 });
    await waitForConvergence(server);
    for (let i = 0; i < 6; i++) {
      const pods = server.list<V1Pod>('pods').filter((p) => p.spec?.nodeName === nodeName(i));
      expect(configMapData(server, configMapNameFor(nodeName(i)))).toEqual(
        desiredConfigMapData(nodeName(i), pods),
      );
    }

    // Churn in bursts (creates, moves, relabels, deletes), then empty node-0 completely.
    for (let burst = 0; burst < 10; burst++) {
      churn.step(30);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    for (const pod of server.list<V1Pod>('pods').filter((p) => p.spec?.nodeName === nodeName(0))) {
      server.delete('pods', `${pod.metadata.namespace}/${pod.metadata.name}`);
    }
    await waitForConvergence(server);
    // The server applies a write before the controller has its answer: wait for the delete's.
    await waitFor(
      () => running!.records.some((r) => r.node === nodeName(0) && r.result === 'deleted'),
      'the delete to be recorded',
    );

    expect(configMapData(server, configMapNameFor(nodeName(0)))).toBeUndefined();
    const cm = server.get<V1ConfigMap>('configmaps', configMapNameFor(nodeName(1)), NS);
    expect(cm.metadata?.labels?.[MANAGED_BY_LABEL]).toBe(CONTROLLER_NAME);
    const m = running.controller.metrics();
    expect(m.created).toBeGreaterThanOrEqual(6);
    expect(m.updated).toBeGreaterThan(0);
    expect(m.deleted).toBeGreaterThanOrEqual(1);
    expect(m.dropped).toBe(0);
    expect(churn.counts.moved).toBeGreaterThan(0);
  });

  it('a pod moving to another node updates the ConfigMaps of both nodes', async () => {
    server.create('pods', makePod(1, 'node-a'));
    server.create('pods', makePod(2, 'node-a'));
    server.create('pods', makePod(3, 'node-b'));
    running = await startController(server);
    await waitForConvergence(server);
    expect(configMapData(server, 'pods-per-node-node-a')?.count).toBe('2');

    const moved = makePod(1, 'node-a').metadata!;
    server.patch('pods', `${moved.namespace}/${moved.name}`, { spec: { nodeName: 'node-b' } });
    await waitFor(
      () => configMapData(server, 'pods-per-node-node-b')?.count === '2',
      'node-b to count 2 pods',
    );
    await waitFor(
      () => configMapData(server, 'pods-per-node-node-a')?.count === '1',
      'node-a to count 1 pod',
    );
    expect(configMapData(server, 'pods-per-node-node-b')?.pods).toContain(`${moved.namespace}/${moved.name}`);
    expect(configMapData(server, 'pods-per-node-node-a')?.pods).not.toContain(
      `${moved.namespace}/${moved.name}`,
    );
  });

  it('puts its ConfigMap back when someone else edits or deletes it', async () => {
    server.create('pods', makePod(1, 'node-a'));
    running = await startController(server);
    await waitForConvergence(server);
    const name = 'pods-per-node-node-a';

    server.patch('configmaps', `${NS}/${name}`, { data: { count: '999' } });
    await waitFor(() => configMapData(server, name)?.count === '1', 'the edited ConfigMap to be restored');

    server.delete('configmaps', `${NS}/${name}`);
    await waitFor(() => configMapData(server, name)?.count === '1', 'the deleted ConfigMap to be recreated');
    await waitForConvergence(server);
  });

  it('deletes ConfigMaps of nodes that have no pods any more when it starts (orphans from an earlier run)', async () => {
    server.create('pods', makePod(1, 'node-a'));
    server.create('configmaps', {
      metadata: {
        name: 'pods-per-node-node-gone',
        namespace: NS,
        labels: { [MANAGED_BY_LABEL]: CONTROLLER_NAME },
      },
      data: { node: 'node-gone', count: '3', pods: 'x\ny\nz' },
    });
    running = await startController(server);
    await waitForConvergence(server);
    expect(configMapData(server, 'pods-per-node-node-gone')).toBeUndefined();
  });

  it('a pod deleted while the watch was down (seen as a tombstone after the relist) still updates its node', async () => {
    for (let i = 0; i < 4; i++) server.create('pods', makePod(i, i < 2 ? 'node-a' : 'node-b'));
    running = await startController(server);
    let tombstones = 0;
    // The same shared informer the controller uses (the factory hands out one per resource).
    running.factory.core.v1.pods().informer.addEventHandler({
      onDelete: (obj) => void (isDeletedFinalStateUnknown(obj) && tombstones++),
    });
    await waitForConvergence(server);
    await server.waitForWatchers(1, { resource: 'pods' });

    // Synchronously: cut the watch, delete while disconnected, forget the history → 410 → relist.
    server.faults.dropWatches({ resource: 'pods' });
    const gone = makePod(0, 'node-a').metadata!;
    server.delete('pods', `${gone.namespace}/${gone.name}`);
    server.faults.compact();

    await waitFor(
      () => configMapData(server, 'pods-per-node-node-a')?.count === '1',
      'node-a to count 1 pod',
    );
    expect(tombstones).toBe(1);
    await waitForConvergence(server);
  });

  it('rejects a second run and invalid options', async () => {
    running = await startController(server);
    await expect(running.controller.run(new AbortController().signal)).rejects.toMatchObject({
      code: ErrorCodes.ALREADY_STARTED,
    });
    const factory = new SharedInformerFactory(server.kubeConfig());
    expect(
      () =>
        new PodsPerNodeController({ factory, kubeConfig: server.kubeConfig(), namespace: NS, workers: 0 }),
    ).toThrow(expect.objectContaining({ code: ErrorCodes.INVALID_OPTION }) as Error);
    expect(
      () =>
        new PodsPerNodeController({
          factory,
          kubeConfig: server.kubeConfig(),
          namespace: NS,
          maxRetries: -1,
        }),
    ).toThrow(expect.objectContaining({ code: ErrorCodes.INVALID_OPTION }) as Error);
  });
});

describe('PodsPerNodeController: failures, backoff and conflicts', () => {
  // The queue runs on a FakeClock: a requeued key waits until the test advances the clock, so the
  // backoff delays are observable exactly (the FakeClock's only timers are the queue's).
  const backoff = (): { clock: FakeClock; rateLimiter: ItemExponentialFailureRateLimiter<string> } => ({
    clock: new FakeClock(),
    rateLimiter: new ItemExponentialFailureRateLimiter<string>({ baseDelayMs: 100, maxDelayMs: 10_000 }),
  });

  it('retries a failing key after 100, 200 and 400 ms of backoff, then succeeds and forgets it', async () => {
    server.create('pods', makePod(1, 'node-a'));
    const { clock, rateLimiter } = backoff();
    let failuresLeft = 3;
    running = await startController(server, {
      clock,
      rateLimiter,
      hooks: {
        beforeReconcile: (_node, attempt) => {
          if (failuresLeft-- > 0)
            throw new KinformerError(ErrorCodes.INTERNAL, `injected failure ${attempt}`);
        },
      },
    });
    const { controller } = running;

    for (const [attempt, delay] of [
      [1, 100],
      [2, 200],
      [3, 400],
    ] as const) {
      await waitFor(() => attempts('node-a') === attempt, `attempt ${attempt}`);
      expect(running.records.at(-1)).toMatchObject({
        attempt,
        result: 'failed',
        error: { code: ErrorCodes.INTERNAL },
      });
      expect(controller.numRequeues('node-a')).toBe(attempt);
      expect(clock.nextTimerAt()! - clock.now()).toBe(delay); // the key waits out its backoff
      clock.advance(delay - 1);
      await flush();
      expect(attempts('node-a')).toBe(attempt); // not a millisecond early
      clock.advance(1);
    }
    await waitFor(() => attempts('node-a') >= 4, 'attempt 4');
    expect(running.records[3]).toMatchObject({ node: 'node-a', attempt: 4, result: 'created' });
    expect(controller.numRequeues('node-a')).toBe(0); // forgotten: the next failure starts at 100 ms again
    expect(configMapData(server, 'pods-per-node-node-a')?.count).toBe('1');
    expect(controller.metrics()).toMatchObject({ failures: 3, requeues: 3, dropped: 0, created: 1 });
  });

  it('drops a key after maxRetries failed retries (a Warning event), and reconciles it again on its next event (a Normal one)', async () => {
    server.create('pods', makePod(1, 'node-a'));
    const { clock, rateLimiter } = backoff();
    let failing = true;
    const recorder = new FakeRecorder();
    running = await startController(server, {
      clock,
      rateLimiter,
      recorder,
      maxRetries: 2,
      hooks: {
        beforeReconcile: () => {
          if (failing) throw new KinformerError(ErrorCodes.SERVICE_UNAVAILABLE, 'injected');
        },
      },
    });
    for (let attempt = 1; attempt <= 3; attempt++) {
      await waitFor(() => attempts('node-a') === attempt, `attempt ${attempt}`);
      if (attempt < 3) clock.advance(clock.nextTimerAt()! - clock.now());
    }
    await flush();
    expect(running.controller.metrics()).toMatchObject({ failures: 3, requeues: 2, dropped: 1 });
    expect(running.controller.numRequeues('node-a')).toBe(0);
    expect(clock.pendingTimers()).toBe(0); // nothing scheduled: the key is out of the queue
    expect(configMapData(server, 'pods-per-node-node-a')).toBeUndefined();

    failing = false;
    server.create('pods', makePod(2, 'node-a'));
    await waitFor(() => running!.records.length > 3, 'node-a to be reconciled after the new event');
    expect(running.records[3]).toMatchObject({ node: 'node-a', attempt: 1, result: 'created' });
    expect(configMapData(server, 'pods-per-node-node-a')?.count).toBe('2');
    expect(recorder.events).toEqual([
      'Warning ReconcileFailed gave up on node node-a after 3 attempts: injected',
      'Normal Created created ConfigMap pods-per-node-node-a for node node-a',
    ]);
  });

  it('a 409 on update is a conflict: requeued with backoff, and the retry writes the ConfigMap', async () => {
    server.create('pods', makePod(1, 'node-a'));
    const { clock, rateLimiter } = backoff();
    running = await startController(server, { clock, rateLimiter });
    await waitForConvergence(server);
    const before = running.records.length;

    server.faults.failNext({ status: 409, verbs: ['update'], resource: 'configmaps' });
    server.create('pods', makePod(2, 'node-a'));
    await waitFor(() => running!.records.slice(before).some((r) => r.result === 'failed'), 'the conflict');
    const failed = running.records.slice(before).find((r) => r.result === 'failed')!;
    expect(failed.error?.code).toBe(ErrorCodes.CONFLICT);
    expect(running.controller.metrics()).toMatchObject({ conflicts: 1, requeues: 1 });
    expect(configMapData(server, 'pods-per-node-node-a')?.count).toBe('1');

    clock.advance(100);
    await waitFor(
      () => running!.records.slice(before).some((r) => r.result === 'updated'),
      'the retried update',
    );
    expect(configMapData(server, 'pods-per-node-node-a')?.count).toBe('2');
    expect(running.controller.numRequeues('node-a')).toBe(0);
  });

  it('a 409 AlreadyExists on create (cache behind the server) is retried like a conflict', async () => {
    server.create('pods', makePod(1, 'node-a'));
    server.faults.failNext({ status: 409, verbs: ['create'], resource: 'configmaps' });
    const { clock, rateLimiter } = backoff();
    running = await startController(server, { clock, rateLimiter });
    await waitFor(() => running!.controller.metrics().conflicts === 1, 'the conflict');
    expect(configMapData(server, 'pods-per-node-node-a')).toBeUndefined();
    clock.advance(100);
    await waitFor(() => running!.records.some((r) => r.result === 'created'), 'the retried create');
    await waitForConvergence(server);
    expect(running.controller.metrics()).toMatchObject({ conflicts: 1, created: 1 });
  });

  it('a write based on a stale cache gets a real 409 from the server and succeeds once the cache caught up', async () => {
    server.create('pods', makePod(1, 'node-a'));
    const { clock, rateLimiter } = backoff();
    running = await startController(server, { clock, rateLimiter });
    await waitForConvergence(server);
    await server.waitForWatchers(1, { resource: 'configmaps' });

    // Hold back the ConfigMap watch, so the cache keeps the old resourceVersion, and change the
    // ConfigMap behind the controller's back.
    const stall = server.faults.stallWatches({ resource: 'configmaps' });
    server.patch('configmaps', `${NS}/pods-per-node-node-a`, {
      metadata: { annotations: { touched: 'yes' } },
    });
    server.create('pods', makePod(2, 'node-a'));
    await waitFor(() => running!.controller.metrics().conflicts >= 1, 'the conflict');
    expect(
      server.requests.some((r) => r.verb === 'update' && r.resource === 'configmaps' && r.status === 409),
    ).toBe(true);
    expect(configMapData(server, 'pods-per-node-node-a')?.count).toBe('1');

    stall.release(); // the cache catches up; the ConfigMap's event enqueues node-a again
    clock.advance(100);
    await waitFor(
      () => configMapData(server, 'pods-per-node-node-a')?.count === '2',
      'the update after the cache caught up',
    );
    expect(
      server.get<V1ConfigMap>('configmaps', 'pods-per-node-node-a', NS).metadata?.annotations?.touched,
    ).toBe('yes');
  });
});
