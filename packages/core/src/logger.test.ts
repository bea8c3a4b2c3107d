import { KinformerError } from './errors.js';
import { errorText, formatLogLine } from './logFormat.js';
import { componentLogger, createLogger, getDefaultLogger, REDACT_PATHS } from './logger.js';
import { redactForLog } from './logRedaction.js';

/** A pino destination that keeps every line, parsed. */
function capture(): {
  destination: { write(line: string): void };
  lines: Array<Record<string, unknown>>;
  raw: () => string;
} {
  const chunks: string[] = [];
  return {
    destination: { write: (line: string) => void chunks.push(line) },
    get lines() {
      return chunks
        .join('')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    },
    raw: () => chunks.join(''),
  };
}

const ENV = 'KINFORMER_LOG_LEVEL';
let saved: string | undefined;
beforeEach(() => {
  saved = process.env[ENV];
  delete process.env[ENV];
});
afterEach(() => {
  if (saved === undefined) delete process.env[ENV];
  else process.env[ENV] = saved;
});

describe('createLogger', () => {
  it('logs warnings and errors by default (it was silent: nothing was ever seen)', () => {
    const out = capture();
    const log = createLogger({ destination: out.destination });
    log.error({ a: 1 }, 'error');
    log.warn('warn');
    log.info('info');
    expect(log.level).toBe('warn');
    expect(out.lines.map((l) => l.msg)).toEqual(['error', 'warn']);
  });

  it('takes its level from KINFORMER_LOG_LEVEL', () => {
    process.env[ENV] = 'debug';
    const out = capture();
    const log = createLogger({ destination: out.destination });
    log.trace('trace');
    log.debug({ n: 1 }, 'debug');
    log.info('info');
    expect(out.lines.map((l) => l.msg)).toEqual(['debug', 'info']);
    expect(out.lines[0]).toMatchObject({ name: 'kinformer', level: 20, n: 1 });
  });

  it('treats an empty KINFORMER_LOG_LEVEL as unset', () => {
    process.env[ENV] = '';
    const out = capture();
    const log = createLogger({ destination: out.destination });
    log.info('info');
    expect(log.level).toBe('warn');
    expect(out.raw()).toBe('');
  });

  it('prefers an explicit level over the environment', () => {
    process.env[ENV] = 'debug';
    const out = capture();
    const log = createLogger({ level: 'warn', destination: out.destination });
    log.info('info');
    log.warn('warn');
    expect(out.lines.map((l) => l.msg)).toEqual(['warn']);
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['a bearer token', { token: 'SECRET-1' }, 'SECRET-1'],
    ['an Authorization value', { authorization: 'Bearer SECRET-2' }, 'SECRET-2'],
    ['an Authorization header', { headers: { Authorization: 'Bearer SECRET-3' } }, 'SECRET-3'],
    ['a request header', { req: { headers: { authorization: 'Bearer SECRET-4' } } }, 'SECRET-4'],
    [
      'a header of an error request',
      { err: { request: { headers: { Authorization: 'Bearer SECRET-5' } } } },
      'SECRET-5',
    ],
    ['a kubeconfig user token', { user: { token: 'SECRET-6' } }, 'SECRET-6'],
    ['a nested kubeconfig user token', { context: { user: { token: 'SECRET-7' } } }, 'SECRET-7'],
    ['a bearerToken', { options: { bearerToken: 'SECRET-8' } }, 'SECRET-8'],
    ['client key data', { user: { keyData: 'SECRET-9' } }, 'SECRET-9'],
    ['a client key', { tls: { clientKey: 'SECRET-10' } }, 'SECRET-10'],
    ['client-key-data', { 'client-key-data': 'SECRET-11' }, 'SECRET-11'],
    ['nested client-key-data', { user: { 'client-key-data': 'SECRET-12' } }, 'SECRET-12'],
    ['an auth-provider access-token', { config: { 'access-token': 'SECRET-13' } }, 'SECRET-13'],
    ['a password', { user: { password: 'SECRET-14' } }, 'SECRET-14'],
  ])('redacts %s', (_name, object, secret) => {
    const out = capture();
    const log = createLogger({ level: 'info', destination: out.destination });
    log.info({ ...object, resource: 'pods.v1' }, 'request');
    const raw = out.raw();
    expect(raw).not.toContain(secret);
    expect(raw).toContain('[REDACTED]');
    expect(out.lines[0]).toMatchObject({ resource: 'pods.v1', msg: 'request' });
  });

  it('redacts through child loggers too', () => {
    const out = capture();
    const child = createLogger({ level: 'info', destination: out.destination }).child({
      component: 'reflector',
    });
    child.warn({ headers: { authorization: 'Bearer CHILD-SECRET' } }, 'retrying');
    expect(out.raw()).not.toContain('CHILD-SECRET');
    expect(out.lines[0]).toMatchObject({ component: 'reflector', headers: { authorization: '[REDACTED]' } });
  });

  it('adds the caller’s redact paths to kinformer’s, never instead of them', () => {
    for (const redact of [['cookie'], { paths: ['cookie'] }]) {
      const out = capture();
      const log = createLogger({ level: 'info', destination: out.destination, pino: { redact } });
      log.info({ cookie: 'COOKIE', token: 'TOKEN', kept: 'yes' }, 'x');
      expect(out.raw()).not.toContain('COOKIE');
      expect(out.raw()).not.toContain('TOKEN');
      expect(out.lines[0]).toMatchObject({ kept: 'yes' });
    }
  });

  it('lists only the paths it redacts, every one of them valid for pino', () => {
    expect(REDACT_PATHS).toContain('token');
    expect(REDACT_PATHS).toContain('*.*.authorization');
    expect(Object.isFrozen(REDACT_PATHS)).toBe(true);
    expect(() => createLogger({ level: 'info', destination: capture().destination })).not.toThrow();
  });
});

describe('componentLogger', () => {
  it('binds the component to every line of the given logger', () => {
    const out = capture();
    const log = componentLogger(createLogger({ level: 'info', destination: out.destination }), {
      component: 'informer',
      resource: 'pods.v1',
    });
    log.info({ count: 3 }, 'synced');
    expect(out.lines).toEqual([
      expect.objectContaining({ component: 'informer', resource: 'pods.v1', count: 3, msg: 'synced' }),
    ]);
  });

  it('falls back to one shared default logger', () => {
    expect(getDefaultLogger()).toBe(getDefaultLogger());
    const child = componentLogger(undefined, { component: 'x' });
    expect(child.bindings()).toEqual({ name: 'kinformer', component: 'x' });
  });
});

describe('createLogger redaction at any depth', () => {
  const deep = (leaf: Record<string, unknown>): Record<string, unknown> => ({
    a: { b: { c: { d: { e: leaf } } } },
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['a token five levels down', deep({ token: 'DEEP-1' }), 'DEEP-1'],
    [
      'an Authorization header five levels down',
      deep({ headers: { Authorization: 'Bearer DEEP-2' } }),
      'DEEP-2',
    ],
    ['a client key (kubeconfig spelling)', deep({ 'client-key': 'DEEP-3' }), 'DEEP-3'],
    ['an OIDC id-token', { config: { 'id-token': 'DEEP-4' } }, 'DEEP-4'],
    ['an OIDC refresh-token', deep({ 'refresh-token': 'DEEP-5' }), 'DEEP-5'],
    ['an access_token', deep({ access_token: 'DEEP-6' }), 'DEEP-6'],
    ['a cookie', deep({ cookie: 'session=DEEP-7' }), 'DEEP-7'],
    ['a set-cookie array', deep({ 'set-cookie': ['session=DEEP-8'] }), 'DEEP-8'],
    [
      'a PEM private key under key',
      deep({ key: '-----BEGIN RSA PRIVATE KEY-----\nDEEP-9\n-----END RSA PRIVATE KEY-----' }),
      'DEEP-9',
    ],
    ['a Buffer under key', deep({ key: Buffer.from('DEEP-10') }), 'DEEP-10'],
    [
      'a Bearer token inside a nested string',
      deep({ note: 'sent Authorization: Bearer DEEP-11 to the server' }),
      'DEEP-11',
    ],
    [
      'rawHeaders',
      { req: { rawHeaders: ['Host', 'h', 'Authorization', 'Bearer DEEP-12', 'Cookie', 'DEEP-13'] } },
      'DEEP-1',
    ],
    ['a password inside an array', { users: [{ name: 'u', password: 'DEEP-14' }] }, 'DEEP-14'],
  ])('redacts %s', (_name, object, secret) => {
    const out = capture();
    createLogger({ level: 'info', destination: out.destination }).info(object, 'x');
    expect(out.raw()).not.toContain(secret);
    expect(out.raw()).toContain('[REDACTED]');
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['a base64 client key under tls.key', { tls: { key: 'TFMwdExTMUNSVWRKVGlCUVVrbFdRVlJG' } }, 'TFMwdE'],
    ['a client key under tlsOptions.key', deep({ tlsOptions: { key: 'TLS-KEY-2' } }), 'TLS-KEY-2'],
    ['a client key under https.key', { https: { key: 'TLS-KEY-3', cert: 'c' } }, 'TLS-KEY-3'],
    ['a pfx bundle under tls', { tls: { pfx: 'TLS-PFX-4' } }, 'TLS-PFX-4'],
    [
      "an agent's options (key next to cert)",
      { agent: { options: { cert: 'c', key: 'TLS-KEY-5' } } },
      'TLS-KEY-5',
    ],
    ['a key next to certData', { user: { certData: 'c', key: 'TLS-KEY-6' } }, 'TLS-KEY-6'],
  ])('redacts %s by its path, whatever its encoding', (_name, object, secret) => {
    const out = capture();
    createLogger({ level: 'info', destination: out.destination }).info(object, 'x');
    expect(out.raw()).not.toContain(secret);
    expect(out.raw()).toContain('[REDACTED]');
    expect(redactForLog(object)).not.toEqual(object);
  });

  it('keeps `key` outside TLS options: a store key, an object key, a key in a tls-less map', () => {
    const object = {
      key: 'default/web-1',
      event: { key: 'kube-system/coredns', reason: 'Synced' },
      labels: { key: 'value' },
      items: [{ key: 'ns/a' }],
    };
    expect(redactForLog(object)).toEqual(object);
  });

  it('keeps a store key (ns/name) under `key`: only key material is redacted there', () => {
    const out = capture();
    createLogger({ level: 'info', destination: out.destination }).info({ key: 'default/web-1' }, 'x');
    expect(out.lines[0]).toMatchObject({ key: 'default/web-1' });
  });

  it('redacts "Bearer …" in the message and printf arguments', () => {
    const out = capture();
    const log = createLogger({ level: 'info', destination: out.destination });
    log.info('got Authorization: Bearer MSG-SECRET-1 back');
    log.info({ n: 1 }, 'header %s', 'Bearer MSG-SECRET-2');
    expect(out.raw()).not.toContain('MSG-SECRET');
    expect(out.lines[0]?.msg).toBe('got Authorization: Bearer [REDACTED] back');
  });

  it("honours the caller's censor (string or function) and remove, for its paths and kinformer's", () => {
    const out = capture();
    const log = createLogger({
      level: 'info',
      destination: out.destination,
      pino: { redact: { paths: ['mine'], censor: '***' } },
    });
    log.info({ mine: 'M', token: 'T', deep: { a: { b: { c: { password: 'P' } } } } }, 'Bearer X1');
    expect(out.lines[0]).toMatchObject({
      mine: '***',
      token: '***',
      deep: { a: { b: { c: { password: '***' } } } },
      msg: 'Bearer ***',
    });
    const fn = capture();
    createLogger({
      level: 'info',
      destination: fn.destination,
      pino: {
        redact: { paths: [], censor: (_v: unknown, path: string[]) => `<${path.map(String).join('.')}>` },
      },
    }).info({ user: { a: { b: { token: 'T' } } } }, 'x');
    expect(fn.lines[0]).toMatchObject({ user: { a: { b: { token: '<user.a.b.token>' } } } });
    const removed = capture();
    createLogger({
      level: 'info',
      destination: removed.destination,
      pino: { redact: { paths: [], remove: true } },
    }).info({ a: { b: { c: { token: 'T' } } }, kept: 1 }, 'x');
    expect(removed.lines[0]).toMatchObject({ a: { b: { c: {} } }, kept: 1 });
    expect(removed.raw()).not.toContain('token');
  });

  it('serialises cause chains with their properties redacted, each message once', () => {
    const root = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), {
      code: 'ECONNREFUSED',
      config: { headers: { authorization: 'Bearer CAUSE-SECRET-1' } },
    });
    const err = new KinformerError(
      'ERR_CONNECTION',
      'could not reach the API server at 127.0.0.1: connect ECONNREFUSED 127.0.0.1:1',
      {
        cause: root,
        details: { request: { token: 'CAUSE-SECRET-2' } },
      },
    );
    const out = capture();
    createLogger({ level: 'info', destination: out.destination }).warn({ err }, 'list failed');
    expect(out.raw()).not.toContain('CAUSE-SECRET');
    const line = out.lines[0] as { err: Record<string, unknown> };
    expect(line.err).toMatchObject({
      type: 'KinformerError',
      code: 'ERR_CONNECTION',
      message: 'could not reach the API server at 127.0.0.1: connect ECONNREFUSED 127.0.0.1:1',
      details: { request: { token: '[REDACTED]' } },
      cause: {
        message: 'connect ECONNREFUSED 127.0.0.1:1',
        code: 'ECONNREFUSED',
        config: { headers: { authorization: '[REDACTED]' } },
      },
    });
    // pino's own serializer appended every cause's message to the error's: "…1: connect ECONNREFUSED …1".
    expect(line.err.message).not.toMatch(/ECONNREFUSED.*ECONNREFUSED/);
  });

  it('redacts child bindings too', () => {
    const out = capture();
    createLogger({ level: 'info', destination: out.destination })
      .child({ auth: { token: 'BIND-SECRET' } })
      .info('x');
    expect(out.raw()).not.toContain('BIND-SECRET');
  });
});

describe('log formats', () => {
  const FORMAT = 'KINFORMER_LOG_FORMAT';
  let savedFormat: string | undefined;
  beforeEach(() => {
    savedFormat = process.env[FORMAT];
  });
  afterEach(() => {
    if (savedFormat === undefined) delete process.env[FORMAT];
    else process.env[FORMAT] = savedFormat;
  });

  it('pretty: one readable line per entry, scope, message, the cause once, the code and other fields', () => {
    const lines: string[] = [];
    const log = createLogger({
      level: 'info',
      format: 'pretty',
      destination: { write: (l: string) => void lines.push(l) },
    });
    const cause = new Error('connect ECONNREFUSED 127.0.0.1:6443');
    const err = new KinformerError(
      'ERR_CONNECTION',
      `could not reach the API server at 127.0.0.1: ${cause.message}`,
      { cause },
    );
    log
      .child({ component: 'reflector', resource: 'pods.v1' })
      .warn({ err, code: err.code, resourceVersion: '12' }, 'list failed; backing off');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^\d\d:\d\d:\d\d\.\d{3} WARN {2}\[reflector pods\.v1\] list failed; backing off: could not reach the API server at 127\.0\.0\.1: connect ECONNREFUSED 127\.0\.0\.1:6443 \(ERR_CONNECTION\) resourceVersion=12\n$/,
    );
    expect(lines[0]!.match(/ECONNREFUSED/g)).toHaveLength(1);
  });

  it('KINFORMER_LOG_FORMAT=pretty turns a destination pretty, json keeps JSON', () => {
    process.env[FORMAT] = 'pretty';
    const pretty: string[] = [];
    createLogger({ destination: { write: (l: string) => void pretty.push(l) } }).error('boom');
    expect(pretty[0]).toMatch(/ERROR boom\n$/);
    process.env[FORMAT] = 'json';
    const json: string[] = [];
    createLogger({ destination: { write: (l: string) => void json.push(l) } }).error('boom');
    expect(JSON.parse(json[0]!)).toMatchObject({ level: 50, msg: 'boom' });
  });

  it('errorText leaves out a cause its error message already contains, and keeps one that adds something', () => {
    expect(errorText({ message: 'a: b', cause: { message: 'b' } })).toBe('a: b');
    expect(errorText({ message: 'list failed', cause: { message: 'ECONNRESET' } })).toBe(
      'list failed: ECONNRESET',
    );
  });

  it('formatLogLine passes a line that is not JSON through', () => {
    expect(formatLogLine('plain\n')).toBe('plain\n');
  });
});
