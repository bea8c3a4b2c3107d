import { ErrorCodes, KinformerError } from './errors.js';
import { rejectOnAbort } from './rejectOnAbort.js';

describe('rejectOnAbort', () => {
  it('resolves and rejects as the promise does while the signal is live, and removes its listener', async () => {
    const controller = new AbortController();
    let added = 0;
    let removed = 0;
    const signal = controller.signal;
    const add = signal.addEventListener.bind(signal);
    const remove = signal.removeEventListener.bind(signal);
    signal.addEventListener = (...args: Parameters<typeof add>) => (added++, add(...args));
    signal.removeEventListener = (...args: Parameters<typeof remove>) => (removed++, remove(...args));
    await expect(rejectOnAbort(Promise.resolve(7), controller.signal)).resolves.toBe(7);
    await expect(rejectOnAbort(Promise.reject(new Error('boom')), controller.signal)).rejects.toThrow('boom');
    // A lock or plugin may reject with a string: it becomes an Error with that message.
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
    const text = Promise.reject('text');
    await expect(rejectOnAbort(text, controller.signal)).rejects.toThrow(new Error('text'));
    expect(added).toBe(3);
    expect(removed).toBe(3);
  });

  it('rejects with ERR_ABORTED (cause: the reason) when the signal aborts first, and handles a later rejection', async () => {
    const controller = new AbortController();
    let fail!: (err: Error) => void;
    const pending = new Promise<number>((_, reject) => (fail = reject));
    const raced = rejectOnAbort(pending, controller.signal);
    const reason = new Error('stop');
    controller.abort(reason);
    const err: unknown = await raced.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KinformerError);
    expect((err as KinformerError).code).toBe(ErrorCodes.ABORTED);
    expect((err as KinformerError).cause).toBe(reason);
    fail(new Error('late')); // handled: an unhandled rejection would fail the run
    await Promise.resolve();
  });

  it('rejects at once on an aborted signal', async () => {
    const controller = new AbortController();
    controller.abort();
    const err: unknown = await rejectOnAbort(Promise.reject(new Error('ignored')), controller.signal).catch(
      (e: unknown) => e,
    );
    expect((err as KinformerError).code).toBe(ErrorCodes.ABORTED);
  });
});
