/**
 * `pnpm start` — this example is mostly its tests (run them with
 * `pnpm test -- examples/testing-a-handler`). This prints what they show and runs the over-HTTP
 * scenario once.
 */
import { runDroppedWatchScenario } from './droppedWatchScenario.js';

console.log(`Testing your own handler logic, two ways:

  src/podWatcher.ts            the code under test: PodWatcher, a ResourceEventHandler that alerts on failing pods
  src/podWatcher.test.ts       (a) unit tests: a SharedIndexInformer over a FakeListerWatcher (scripted LIST answers
                                   and WATCH events) with a FakeClock (resyncs and backoff without waiting)
  src/podWatcher.http.test.ts  (b) over HTTP: a SharedInformerFactory on FakeApiServer, with a dropped watch

Running (b) once:
`);
await runDroppedWatchScenario();
