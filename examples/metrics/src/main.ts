/**
 * `node examples/metrics/dist/main.js [--port 8080]`: serves `/metrics`, `/healthz` and `/readyz` for
 * an informer factory on the embedded FakeApiServer, with a little churn, until Ctrl-C.
 */
import { startMetricsExample } from './metricsExample.js';

const portArg = process.argv.indexOf('--port');
const port = portArg >= 0 ? Number(process.argv[portArg + 1]) : 8080;
const example = await startMetricsExample({ port });
console.log(
  `serving ${example.url}/metrics, ${example.url}/healthz and ${example.url}/readyz?verbose (Ctrl-C to stop)`,
);

let n = 0;
const churn = setInterval(() => {
  example.apiServer.patch('pods', `default/web-${(n += 2) % 200}`, {
    metadata: { labels: { rev: String(n) } },
  });
}, 100);
process.once('SIGINT', () => {
  clearInterval(churn);
  void example.close().then(() => process.exit(0));
  process.once('SIGINT', () => process.exit(130));
});
