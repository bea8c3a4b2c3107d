import { request as httpRequest, type IncomingMessage } from 'node:http';
import { FakeClock } from '@kinformer/core/testing';
import { FakeApiServer } from '../index.js';
import { serverPod } from '@kinformer/test-tools';
import { WatchReader, watchReaders, closeAfterEach } from '../wire.test.helpers.js';

// Opt-in server-side limits on watches: kube-apiserver's --min-request-timeout and the cacher's
// closing of slow watchers. Both are off by default.

let server: FakeApiServer;
const readers = watchReaders();

closeAfterEach(() => server);

async function watch(query: string): Promise<WatchReader> {
  const reader = await WatchReader.open(`${server.url}/api/v1/namespaces/default/pods?${query}`);
  readers.push(reader);
  return reader;
}

describe('server-side watch timeouts (minRequestTimeoutMs)', () => {
  test('without timeoutSeconds a watch ends cleanly after min·(1+rand), as handlers/get.go handleWatch', async () => {
    // kube-apiserver: timeout = minRequestTimeout * (rand.Float64() + 1.0) when timeoutSeconds is unset.
    const clock = new FakeClock(0);
    server = await FakeApiServer.start({ clock, minRequestTimeoutMs: 10_000, random: () => 0.25 });
    const w = await watch(`watch=true&resourceVersion=${server.resourceVersion}`);
    await server.waitForWatchers(1);
    clock.advance(12_499);
    await w.expectQuiet(30);
    clock.advance(1);
    expect(await w.readToEnd()).toEqual({ lines: [] });
    await server.waitFor(() => server.openWatchCount() === 0);
  });

  test('timeoutSeconds still wins, and the option is off by default', async () => {
    const clock = new FakeClock(0);
    server = await FakeApiServer.start({ clock, minRequestTimeoutMs: 10_000, random: () => 0.99 });
    const timed = await watch(`watch=true&resourceVersion=${server.resourceVersion}&timeoutSeconds=1`);
    await server.waitForWatchers(1);
    clock.advance(1_000);
    expect(await timed.readToEnd()).toEqual({ lines: [] });
    await server.close();

    server = await FakeApiServer.start({ clock });
    const forever = await watch(`watch=true&resourceVersion=${server.resourceVersion}`);
    await server.waitForWatchers(1);
    clock.advance(10 * 3_600_000);
    await forever.expectQuiet(30);
    expect(server.openWatchCount()).toBe(1);
  });
});

describe('slow consumers (slowConsumers)', () => {
  test('a watcher whose buffer stays over the bound past the budget is closed cleanly, its buffer dropped (cacher dispatchEvent / cacheWatcher.add)', async () => {
    // kube-apiserver: an event that does not fit a watcher's full input buffer within the
    // dispatch budget terminates the watcher (forget(false)): no ERROR, buffered events dropped.
    const clock = new FakeClock(0);
    server = await FakeApiServer.start({ clock, slowConsumers: { bufferEvents: 3, budgetMs: 100 } });
    const w = await watch(`watch=true&resourceVersion=${server.resourceVersion}`);
    await server.waitForWatchers(1);
    server.faults.stallWatches(); // the client reads nothing
    for (const name of ['a', 'b', 'c']) server.create('pods', serverPod(name));
    clock.advance(1_000);
    expect(server.openWatchCount()).toBe(1); // at the bound, not over it
    server.create('pods', serverPod('d'));
    clock.advance(99);
    expect(server.openWatchCount()).toBe(1);
    clock.advance(1);
    expect(await w.readToEnd()).toEqual({ lines: [] });
    await server.waitFor(() => server.openWatchCount() === 0);
  });

  test('a consumer that catches up within the budget keeps its watch', async () => {
    const clock = new FakeClock(0);
    server = await FakeApiServer.start({ clock, slowConsumers: { bufferEvents: 1, budgetMs: 100 } });
    const w = await watch(`watch=true&resourceVersion=${server.resourceVersion}`);
    await server.waitForWatchers(1);
    const stall = server.faults.stallWatches();
    server.create('pods', serverPod('a'));
    server.create('pods', serverPod('b'));
    stall.release();
    expect((await w.take(2)).map((e) => e.object.metadata?.name)).toEqual(['a', 'b']);
    clock.advance(1_000);
    server.create('pods', serverPod('c'));
    expect((await w.next()).object.metadata?.name).toBe('c');
    expect(server.openWatchCount()).toBe(1);
  });

  test('a client that stops reading a real socket is closed once the socket backs up', async () => {
    const clock = new FakeClock(0);
    server = await FakeApiServer.start({ clock, slowConsumers: { bufferEvents: 10 } });
    const res = await new Promise<IncomingMessage>((resolve, reject) => {
      const req = httpRequest(
        `${server.url}/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=1`,
      );
      req.on('response', resolve).on('error', reject).end();
    });
    res.pause(); // never read
    await server.waitForWatchers(1);
    const data = { blob: 'x'.repeat(256 * 1024) };
    for (let i = 0; i < 200 && server.openWatchCount() === 1; i++) {
      server.create('configmaps', { metadata: { name: `cm-${i}` }, data });
      await new Promise<void>((resolve) => setImmediate(resolve));
      clock.advance(100);
    }
    await server.waitFor(() => server.openWatchCount() === 0);
    res.destroy();
  });

  test('off by default: a stalled watcher buffers without limit', async () => {
    const clock = new FakeClock(0);
    server = await FakeApiServer.start({ clock });
    const w = await watch(`watch=true&resourceVersion=${server.resourceVersion}`);
    await server.waitForWatchers(1);
    const stall = server.faults.stallWatches();
    for (let i = 0; i < 50; i++) server.create('pods', serverPod(`p-${i}`));
    clock.advance(60_000);
    stall.release();
    expect(await w.take(50)).toHaveLength(50);
  });
});
