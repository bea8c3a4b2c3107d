import { inspect } from 'node:util';
import { redactUrl, redactUrlCredentials, sanitizedError } from './redact.js';

describe('redactUrl', () => {
  it.each([
    ['http://user:pass@[::1', 'http://***@[::1'],
    ['https://user:pass@k8s.example.com:6443/base', 'https://***@k8s.example.com:6443/base'],
    ['https://user:p@ss/w0rd@k8s.example.com', 'https://***@k8s.example.com'],
    ['user:pass@k8s.example.com', '***@k8s.example.com'],
    ['socks5://only-user@proxy:1080', 'socks5://***@proxy:1080'],
    ['https://k8s.example.com:6443', 'https://k8s.example.com:6443'],
    ['', ''],
  ])('%s → %s', (input, expected) => {
    expect(redactUrl(input)).toBe(expected);
  });
});

describe('redactUrlCredentials', () => {
  it('replaces the userinfo of every URL in a text and leaves the rest alone', () => {
    expect(
      redactUrlCredentials(
        'proxy http://a:b@p:3128 refused; server https://c:d@e@s:6443/api?x=1 and mail me@host',
      ),
    ).toBe('proxy http://***@p:3128 refused; server https://***@s:6443/api?x=1 and mail me@host');
    expect(redactUrlCredentials('connect ECONNREFUSED 127.0.0.1:6443')).toBe(
      'connect ECONNREFUSED 127.0.0.1:6443',
    );
  });
});

describe('sanitizedError', () => {
  it('keeps the name, the redacted message and the code of a URL TypeError, and drops its input', () => {
    let thrown: unknown;
    try {
      new URL('http://kinformer:hunter2@[::1');
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toMatchObject({ input: expect.stringContaining('hunter2') }); // what Node attaches
    const safe = sanitizedError(thrown);
    expect(safe).toBeInstanceOf(TypeError);
    expect(safe).toMatchObject({ name: 'TypeError', code: 'ERR_INVALID_URL' });
    expect(safe).not.toHaveProperty('input');
    expect(inspect(safe, { showHidden: true, depth: 5 })).not.toContain('hunter2');
    expect(JSON.stringify(safe)).not.toContain('hunter2');
  });

  it('redacts URL userinfo in the message and keeps nothing but name, message and a string code', () => {
    const original = Object.assign(new Error('cannot reach http://u:hunter2@proxy:3128'), {
      code: 'EPROXY',
      stdout: 'token: hunter2',
      errno: -1,
    });
    original.name = 'ExecError';
    const safe = sanitizedError(original);
    expect(safe.message).toBe('cannot reach http://***@proxy:3128');
    expect(safe.name).toBe('ExecError');
    expect(Object.keys(safe)).toEqual(['code']);
    expect(inspect(safe, { showHidden: true })).not.toContain('hunter2');
    expect(sanitizedError('plain http://x:hunter2@h').message).toBe('plain http://***@h');
  });
});
