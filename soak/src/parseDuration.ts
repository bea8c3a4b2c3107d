/**
 * Parses a duration such as `500ms`, `30s`, `10m`, `1h` or a bare number of seconds into
 * milliseconds. Throws a `RangeError` for anything else.
 */
export function parseDuration(text: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  if (match === null)
    throw new RangeError(`invalid duration ${JSON.stringify(text)}: use e.g. 500ms, 30s, 10m, 1h`);
  const value = Number(match[1]);
  switch (match[2]) {
    case 'ms':
      return value;
    case 'm':
      return value * 60_000;
    case 'h':
      return value * 3_600_000;
    default:
      return value * 1000;
  }
}
