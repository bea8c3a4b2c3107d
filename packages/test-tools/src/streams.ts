/**
 * Reads `iterable` to its end: the events it yielded and the error it ended with (`undefined` when
 * it ended cleanly). For watch streams, which end by throwing.
 */
export async function collect<T>(iterable: AsyncIterable<T>): Promise<{ events: T[]; error: unknown }> {
  const events: T[] = [];
  try {
    for await (const e of iterable) events.push(e);
  } catch (error) {
    return { events, error };
  }
  return { events, error: undefined };
}
