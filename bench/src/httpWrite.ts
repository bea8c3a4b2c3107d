import type http from 'node:http';

/** Writes `chunk` and resolves once the response can take more (drained) or is closed. */
export function write(res: http.ServerResponse, chunk: Buffer | string): Promise<void> {
  if (res.write(chunk)) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
