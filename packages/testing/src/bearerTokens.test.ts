import { FakeApiServer } from './fakeApiServer.js';

// `requireBearerTokens`: kube-apiserver's token authenticator (apiserver/pkg/authentication/request/
// bearertoken) behind `WithAuthentication` (apiserver/pkg/endpoints/filters/authentication.go),
// which answers 401 with an `Unauthorized` Status when no authenticator accepts the request.

let server: FakeApiServer;
beforeEach(async () => {
  server = await FakeApiServer.start();
});
afterEach(() => server.close());

const get = (token?: string): Promise<Response> =>
  fetch(
    `${server.url}/api/v1/pods`,
    token === undefined ? {} : { headers: { Authorization: `Bearer ${token}` } },
  );

describe('FakeApiServer.requireBearerTokens', () => {
  it('accepts any request by default', async () => {
    expect((await get()).status).toBe(200);
    expect((await get('anything')).status).toBe(200);
  });

  it('answers 401 Unauthorized to a request without a listed token, and can rotate and turn off', async () => {
    server.requireBearerTokens(['a']);
    expect((await get('a')).status).toBe(200);
    const refused = await get('b');
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ kind: 'Status', reason: 'Unauthorized', code: 401 });
    expect((await get()).status).toBe(401);
    server.requireBearerTokens(['b']);
    expect((await get('a')).status).toBe(401);
    expect((await get('b')).status).toBe(200);
    server.requireBearerTokens(undefined);
    expect((await get()).status).toBe(200);
    expect(server.requests.map((r) => r.status)).toEqual([200, 401, 401, 401, 200, 200]);
  });

  it('answers 401 to /openapi/v3 without a listed token (authentication wraps every route)', async () => {
    server.requireBearerTokens(['a']);
    const open = (token: string): Promise<Response> =>
      fetch(`${server.url}/openapi/v3`, { headers: { Authorization: `Bearer ${token}` } });
    expect((await open('b')).status).toBe(401);
    expect((await open('a')).status).toBe(200);
  });
});
