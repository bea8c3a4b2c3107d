/**
 * An error as one line: its message's first line (once, when it only repeats its cause), without a
 * stack. For what the demo prints when it gives up.
 */
export function firstLine(err: unknown): string {
  let text = err instanceof Error ? err.message : String(err);
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : undefined;
  if (cause !== undefined && text === `${cause}: ${cause}`) text = cause;
  text = text.split('\n', 1)[0]!.trim();
  return text.length > 300 ? `${text.slice(0, 297)}...` : text;
}
