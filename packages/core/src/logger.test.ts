import { componentLogger, createLogger, getDefaultLogger, REDACT_PATHS } from './logger.js';

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
  it('is silent by default', () => {
    const out = capture();
    const log = createLogger({ destination: out.destination });
    log.fatal('fatal');
    log.error({ a: 1 }, 'error');
    log.info('info');
    expect(log.level).toBe('silent');
    expect(out.raw()).toBe('');
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
    log.error('error');
    expect(log.level).toBe('silent');
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

  it('falls back to one shared, silent default logger', () => {
    expect(getDefaultLogger()).toBe(getDefaultLogger());
    const child = componentLogger(undefined, { component: 'x' });
    expect(child.bindings()).toEqual({ name: 'kinformer', component: 'x' });
    expect(child.isLevelEnabled('fatal')).toBe(false);
  });
});
