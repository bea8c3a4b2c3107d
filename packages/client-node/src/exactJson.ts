import { BACKSLASH, COLON, isSpace, QUOTE } from './jsonBytes.js';

/**
 * `JSON.parse` with a guard for V8's wrong-key bug (nodejs/node#63785, open upstream; Node 24.21 and
 * 26 have it): once `JSON.parse` has made an object with a key holding a backslash (`{"a":1,"\\\\":0}`
 * gives the key `\`), a later `JSON.parse` of an object with the same keys before an escaped key
 * (`{"a":1,"\\"":2}`) can return that earlier key (`\`) instead of the right one (`"`). V8 compares
 * the escaped key's raw characters, as many as the decoded key has, with the keys it already knows, so
 * the wrong key is always one that holds a backslash and that an earlier `JSON.parse` created.
 *
 * kinformer's decoders parse a text whose keys hold a backslash with {@link parseJsonExact} (no
 * `JSON.parse` of the text), so they never create such a key in V8's maps and never misread one, and
 * everything else with `JSON.parse`. The check ({@link keysHoldBackslash}) is one native `indexOf`
 * for a text without backslashes, and a hop from backslash to backslash otherwise (~2 % of
 * `JSON.parse` on a pod whose `managedFields` keys hold `\"`).
 *
 * What it does not cover: other code in the same process that `JSON.parse`s an object whose keys hold
 * a backslash (from a custom resource with arbitrary map keys) can still make V8 misread a later
 * escaped key (a `managedFields` key such as `k:{\"name\":\"main\"}`) with the same keys before it.
 * Checking every object with an escaped key after parsing costs about a third of `JSON.parse` on
 * every pod, so kinformer does not.
 */

/**
 * `JSON.parse(text)`, except that a text with a key holding a backslash is parsed by
 * {@link parseJsonExact}. Throws a `SyntaxError` naming the position (`… at position N`) for text that
 * is not JSON.
 */
export function parseJson(text: string): unknown {
  return keysHoldBackslash(text) ? parseJsonExact(text) : JSON.parse(text);
}

/**
 * True when a key of JSON text `text` holds a backslash once decoded (`"a\\b":`, `"\u005c":`): the
 * keys that set off V8's wrong-key bug. Backslashes occur only inside strings, so only the strings
 * that hold one are looked at: from a string's first backslash to its closing quote, then whether a
 * `:` follows. Text that is not JSON may give either answer (the parse that follows rejects it).
 */
export function keysHoldBackslash(text: string): boolean {
  let at = text.indexOf('\\');
  while (at !== -1) {
    // The string's first backslash: its opening quote is the last quote before it.
    const open = text.lastIndexOf('"', at);
    let close = -1;
    for (let from = at; ;) {
      const q = text.indexOf('"', from);
      if (q === -1) return false;
      let k = q - 1;
      while (k > open && text.charCodeAt(k) === BACKSLASH) k--;
      if ((q - 1 - k) % 2 === 0) {
        close = q;
        break;
      }
      from = q + 1;
    }
    let next = close + 1;
    while (isSpace(text.charCodeAt(next))) next++;
    if (text.charCodeAt(next) === COLON) {
      const raw = text.slice(open + 1, close);
      // A backslash decoded from a key: `\\` (no other escape ends in a backslash) or `\u005c`.
      if (raw.includes('\\\\') || /\\u005c/i.test(raw)) return true;
    }
    at = text.indexOf('\\', close + 1);
  }
  return false;
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

function syntaxError(what: string, position: number): SyntaxError {
  return new SyntaxError(`${what} in JSON at position ${position}`);
}

interface Frame {
  container: Record<string, unknown> | unknown[];
  /** The key whose value is being parsed (objects only). */
  key: string;
}

/**
 * `JSON.parse(text)` without V8's JSON parser, for the texts {@link parseJson} keeps from it: the same
 * values (own `__proto__` keys, later duplicate keys win, `-0`, `1e400` as `Infinity`), iterative (any
 * nesting depth), strings decoded by `JSON.parse` of their literal alone (a string value is never
 * misread). Several times slower than `JSON.parse`. Throws a `SyntaxError` naming the position.
 */
export function parseJsonExact(text: string): unknown {
  const n = text.length;
  let i = 0;
  const stack: Frame[] = [];

  const skipSpace = (): void => {
    while (i < n && isSpace(text.charCodeAt(i))) i++;
  };
  const readString = (): string => {
    const open = i;
    let from = i + 1;
    for (;;) {
      const q = text.indexOf('"', from);
      if (q === -1) throw syntaxError('Unterminated string', n);
      let k = q - 1;
      while (k > open && text.charCodeAt(k) === BACKSLASH) k--;
      if ((q - 1 - k) % 2 === 0) {
        i = q + 1;
        try {
          return JSON.parse(text.slice(open, q + 1)) as string;
        } catch {
          throw syntaxError('Bad string', open);
        }
      }
      from = q + 1;
    }
  };
  const readKey = (): string => {
    skipSpace();
    if (text.charCodeAt(i) !== QUOTE) throw syntaxError('Expected a property name', i);
    const key = readString();
    skipSpace();
    if (text.charCodeAt(i) !== COLON) throw syntaxError("Expected ':'", i);
    i++;
    return key;
  };

  for (;;) {
    // A value starts here.
    skipSpace();
    let value: unknown;
    const c = text[i];
    if (c === '{' || c === '[') {
      i++;
      skipSpace();
      if (c === '{') {
        if (text[i] === '}') {
          i++;
          value = {};
        } else {
          stack.push({ container: {}, key: readKey() });
          continue;
        }
      } else if (text[i] === ']') {
        i++;
        value = [];
      } else {
        stack.push({ container: [], key: '' });
        continue;
      }
    } else if (c === '"') {
      value = readString();
    } else if (c === 't' && text.startsWith('true', i)) {
      value = true;
      i += 4;
    } else if (c === 'f' && text.startsWith('false', i)) {
      value = false;
      i += 5;
    } else if (c === 'n' && text.startsWith('null', i)) {
      value = null;
      i += 4;
    } else {
      NUMBER.lastIndex = i;
      const m = NUMBER.exec(text);
      if (m === null) throw syntaxError(i >= n ? 'Unexpected end' : 'Unexpected token', i);
      value = Number(m[0]);
      i += m[0].length;
    }
    // A value is complete: put it in its container, and close containers that end here.
    for (;;) {
      const top = stack[stack.length - 1];
      if (top === undefined) {
        skipSpace();
        if (i < n) throw syntaxError('Unexpected non-whitespace character after JSON', i);
        return value;
      }
      const { container } = top;
      if (Array.isArray(container)) container.push(value);
      // An own property even for "__proto__", as JSON.parse makes it.
      else
        Object.defineProperty(container, top.key, {
          value,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      skipSpace();
      const d = text[i++];
      if (d === ',') {
        if (!Array.isArray(container)) top.key = readKey();
        break;
      }
      if (d === (Array.isArray(container) ? ']' : '}')) {
        stack.pop();
        value = container;
        continue;
      }
      throw syntaxError(d === undefined ? 'Unexpected end' : 'Unexpected token', i - 1);
    }
  }
}
