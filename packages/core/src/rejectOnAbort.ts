import { abortError } from './errors.js';

/**
 * `promise`, or a rejection with {@link abortError} (cause: the signal's reason) as soon as `signal` aborts,
 * whichever comes first: for calls that ignore their signal. The abort listener is removed when the race
 * settles; a rejection of `promise` after the abort is handled (never unhandled). A rejection that is not an
 * `Error` is wrapped in one.
 */
export async function rejectOnAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  promise.catch(() => undefined);
  if (signal.aborted) throw abortError(signal);
  let onAbort!: () => void;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(abortError(signal));
  });
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    return await Promise.race([promise, aborted]);
  } catch (err) {
    throw err instanceof Error ? err : new Error(String(err));
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}
