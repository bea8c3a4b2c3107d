import { Registry, Counter } from 'prom-client';
import type { HealthCheck } from './healthChecks.js';
import { pingCheck } from './healthChecks.js';
import { createHealthHandler, createMetricsHandler, type HttpResponseLike } from './httpHandlers.js';

class Response implements HttpResponseLike {
  statusCode = 0;
  headers = new Map<string, string>();
  body: string | undefined;
  readonly ended: Promise<void>;
  #resolve!: () => void;
  constructor() {
    this.ended = new Promise((resolve) => (this.#resolve = resolve));
  }
  setHeader(name: string, value: string): this {
    this.headers.set(name.toLowerCase(), value);
    return this;
  }
  end(body?: string): this {
    this.body = body;
    this.#resolve();
    return this;
  }
}

const bad: HealthCheck = { name: 'bad', check: () => 'this will fail' };

function get(handler: ReturnType<typeof createHealthHandler>, url: string) {
  const res = new Response();
  const handled = handler({ url }, res);
  return { handled, status: res.statusCode, body: res.body, type: res.headers.get('content-type') };
}

describe('createHealthHandler', () => {
  // The cases of k8s.io/apiserver pkg/server/healthz/healthz_test.go (testMultipleChecks), on /readyz.
  it.each([
    ['?verbose', false, 200, '[+]ping ok\nreadyz check passed\n'],
    ['?exclude=dontexist', false, 200, 'ok'],
    ['?exclude=bad', true, 200, 'ok'],
    ['?verbose=true&exclude=bad', true, 200, '[+]ping ok\n[+]bad excluded: ok\nreadyz check passed\n'],
    [
      '?verbose=true&exclude=dontexist',
      false,
      200,
      '[+]ping ok\nwarn: some health checks cannot be excluded: no matches for "dontexist"\nreadyz check passed\n',
    ],
    ['/ping', false, 200, 'ok'],
    ['', false, 200, 'ok'],
    ['?verbose', true, 500, '[+]ping ok\n[-]bad failed: reason withheld\nreadyz check failed\n'],
    ['/ping', true, 200, 'ok'],
    ['/bad', true, 500, 'internal server error: this will fail\n'],
    ['', true, 500, '[+]ping ok\n[-]bad failed: reason withheld\nreadyz check failed\n'],
    ['/nope', false, 404, '404 page not found\n'],
  ])('/readyz%s (bad check: %s) answers %i as kube does', (suffix, withBad, status, body) => {
    const handler = createHealthHandler({ readyz: withBad ? [pingCheck, bad] : [pingCheck] });
    const res = get(handler, `/readyz${suffix}`);
    expect(res).toEqual({ handled: true, status, body, type: 'text/plain; charset=utf-8' });
  });

  it('serves /healthz and /livez with their own checks, and hands other paths on', () => {
    const failures: string[] = [];
    const handler = createHealthHandler({
      healthz: [pingCheck],
      readyz: [bad],
      livez: [bad],
      onFailure: (endpoint, report) =>
        failures.push(`${endpoint}: ${report.checks.map((c) => c.reason ?? 'ok').join(', ')}`),
    });
    expect(get(handler, '/healthz').status).toBe(200);
    expect(get(handler, '/livez?verbose').body).toBe('[-]bad failed: reason withheld\nlivez check failed\n');
    expect(failures).toEqual(['livez: this will fail']);

    let nexts = 0;
    const res = new Response();
    expect(handler({ url: '/metrics' }, res, () => nexts++)).toBe(false);
    expect(handler({ url: '/readyz/bad/extra' }, res)).toBe(false);
    expect(nexts).toBe(1);
    expect(res.statusCode).toBe(0);
    expect(get(createHealthHandler(), '/livez').handled).toBe(false);
  });
});

describe('createMetricsHandler', () => {
  it("serves the registry's text format at /metrics and nothing else", async () => {
    const registry = new Registry();
    new Counter({ name: 'things_total', help: 'Things.', registers: [registry] }).inc(3);
    const handler = createMetricsHandler(registry);
    const res = new Response();
    expect(handler({ url: '/metrics?x=1' }, res)).toBe(true);
    await res.ended;
    expect(res.statusCode).toBe(200);
    expect(res.headers.get('content-type')).toBe(registry.contentType);
    expect(res.body).toContain('things_total 3');
    expect(handler({ url: '/' }, new Response())).toBe(false);
  });

  it('answers 500 when collection fails', async () => {
    const handler = createMetricsHandler({
      contentType: 'text/plain',
      metrics: () => Promise.reject(new Error('collect failed')),
    });
    const res = new Response();
    handler({ url: '/metrics' }, res);
    await res.ended;
    expect([res.statusCode, res.body]).toEqual([500, 'collect failed\n']);
  });
});
