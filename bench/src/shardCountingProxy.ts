import net from 'node:net';

/** A TCP proxy to `target` that counts the bytes the server sends (what a client receives). */
export async function countingProxy(
  target: URL,
): Promise<{ url: string; bytes: () => number; close: () => void }> {
  let bytes = 0;
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    upstream.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
    });
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return { url: `http://127.0.0.1:${port}`, bytes: () => bytes, close: () => server.close() };
}
