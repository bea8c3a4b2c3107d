import fc from 'fast-check';

import { ErrorCodes, KinformerError } from './errors.js';
import { parseFieldSelector } from './fieldSelector.js';
import { parseLabelSelector } from './labelSelector.js';

/** The two selector parsers, one column each: where their rules on junk text differ is a cell. */
const parsers = [
  {
    parser: 'parseFieldSelector',
    parse: parseFieldSelector,
    units: ['a', 'b', '=', '!', ',', '\\', ' '],
    maxLength: 16,
    /** The error position is inside the text (never at its end). */
    positionAtEnd: false,
    messageNamesPosition: false,
    stringRoundTrips: true,
    numRuns: 3000,
  },
  {
    parser: 'parseLabelSelector',
    parse: parseLabelSelector,
    units: ['a', 'b', 'in', 'notin', '=', '!', '(', ')', ',', ' ', '\t', '-', '/', '.', '>', '@'],
    maxLength: 24,
    /** An unfinished selector fails at the end of the text. */
    positionAtEnd: true,
    messageNamesPosition: true,
    stringRoundTrips: false,
    numRuns: 2000,
  },
] as const;

describe('selector text', () => {
  it.each(parsers)(
    '$parser either parses into something that round-trips or throws ERR_INVALID_SELECTOR with a position in the text',
    (column) => {
      const parse = column.parse as (text: string) => { toString(): string };
      const junk = fc.string({ unit: fc.constantFrom(...column.units), maxLength: column.maxLength });
      fc.assert(
        fc.property(junk, (text) => {
          let selector;
          try {
            selector = parse(text);
          } catch (err) {
            expect(err).toBeInstanceOf(KinformerError);
            const e = err as KinformerError;
            expect(e.code).toBe(ErrorCodes.INVALID_SELECTOR);
            expect(e.details?.selector).toBe(text);
            expect(e.details?.position).toBeGreaterThanOrEqual(0);
            if (column.positionAtEnd) expect(e.details?.position).toBeLessThanOrEqual(text.length);
            else expect(e.details?.position).toBeLessThan(text.length);
            if (column.messageNamesPosition)
              expect(e.message).toContain(`position ${String(e.details?.position)}`);
            return;
          }
          expect(parse(selector.toString())).toEqual(selector);
          if (column.stringRoundTrips)
            expect(parse(selector.toString()).toString()).toBe(selector.toString());
        }),
        { numRuns: column.numRuns },
      );
    },
  );
});
