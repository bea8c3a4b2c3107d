/**
 * resourceVersion helpers.
 *
 * Kubernetes documents resourceVersions as opaque strings, but since KEP-5504 (GA in 1.35) a conformant
 * cluster promises decimal integers without leading zeros that increase monotonically. kinformer never
 * rejects an object for its resourceVersion: these helpers only serve diagnostics (the reflector logs
 * and counts versions that are not numeric or that go backwards).
 */

const DECIMAL = /^[0-9]+$/;

/** True when `rv` is a non-empty string of decimal digits. `""` and `"0"`-style request values included. */
export function isNumericResourceVersion(rv: string): boolean {
  return DECIMAL.test(rv);
}

/**
 * Compares two decimal resourceVersions (by length after stripping leading zeros, then lexically), like
 * client-go's `CompareResourceVersion`. Returns a negative number, 0 or a positive number. Returns
 * `undefined` when either value is not numeric (opaque values cannot be ordered).
 */
export function compareResourceVersions(a: string, b: string): number | undefined {
  if (!DECIMAL.test(a) || !DECIMAL.test(b)) return undefined;
  const x = stripZeros(a);
  const y = stripZeros(b);
  if (x.length !== y.length) return x.length - y.length;
  return x < y ? -1 : x > y ? 1 : 0;
}

function stripZeros(rv: string): string {
  let i = 0;
  while (i < rv.length - 1 && rv.charCodeAt(i) === 48) i++;
  return i === 0 ? rv : rv.slice(i);
}
