/**
 * `@kinformer/reflector/testing`: fakes for testing reflector-driven code without HTTP.
 *
 * ```ts
 * const lw = new FakeListerWatcher<Pod>().enqueueList({ metadata: { resourceVersion: '1' }, items: [] });
 * const done = new Reflector(lw, store, { clock }).run(signal);
 * const watch = await lw.nextWatch();           // watch from "1"
 * watch.add(pod('foo', '2')).close();           // then the reflector re-watches from "2"
 * ```
 */
export type {
  FakeCall,
  FakeListerWatcherOptions,
  FakeListResult,
  FakeWatchScript,
} from './fakeListerWatcher.js';
export { FakeListerWatcher } from './fakeListerWatcher.js';
export { FakeWatchStream } from './fakeWatchStream.js';
