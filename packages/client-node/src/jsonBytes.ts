/** JSON's structural bytes, for the byte-level scanners of list bodies. */
export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const OPEN_BRACE = 0x7b;
export const CLOSE_BRACE = 0x7d;
export const OPEN_BRACKET = 0x5b;
export const CLOSE_BRACKET = 0x5d;
export const COMMA = 0x2c;
export const COLON = 0x3a;

/** True for JSON whitespace. */
export function isSpace(c: number | undefined): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/**
 * From `i` inside a string: the index of its closing quote, or `n` when the string goes on past the
 * chunk (`n + 1` when the chunk ends in a backslash: the next chunk's first byte is escaped). Bytes of
 * multi-byte UTF-8 characters are all >= 0x80, so never a quote or a backslash.
 */
export function closingQuote(buf: Buffer, i: number, n: number): number {
  for (;;) {
    // The plain bytes of the string, compared twice each: the loop every scanner spends its time in.
    let c = 0;
    while (i < n && (c = buf[i] as number) !== QUOTE && c !== BACKSLASH) i++;
    if (i >= n || c === QUOTE) return i;
    // A backslash: the byte after it is escaped (it may be a quote).
    i += 2;
  }
}
