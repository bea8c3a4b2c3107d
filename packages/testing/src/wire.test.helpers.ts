/**
 * Test helpers that talk to a FakeApiServer over real HTTP with `fetch` and read watch streams
 * line by line. Only used by the tests of this package.
 */

/** A response read in full. */
export interface WireResponse {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed body, when it is JSON. */
  json: Record<string, unknown>;
}

/** GETs (or sends) a request and reads the whole body. */
export async function request(url: string, init: RequestInit = {}): Promise<WireResponse> {
  const res = await fetch(url, init);
  const text = await res.text();
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // not JSON
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** Sends a JSON body with `method`. */
export function send(
  url: string,
  method: string,
  body: unknown,
  contentType = 'application/json',
): Promise<WireResponse> {
  return request(url, { method, headers: { 'Content-Type': contentType }, body: JSON.stringify(body) });
}

/** A parsed watch event line. */
export interface WatchLine {
  type: string;
  object: Record<string, unknown> & { metadata?: Record<string, unknown> };
}

/** What reading a watch stream to its end gave. */
export interface StreamEnd {
  lines: string[];
  /** Set when the stream ended with a network error instead of a clean end. */
  error?: unknown;
}

/** Reads a watch response line by line, with bounded waits. */
export class WatchReader {
  readonly status: number;
  readonly headers: Headers;
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  readonly #decoder = new TextDecoder();
  readonly #controller: AbortController;
  #buffer = '';
  #done = false;
  #error: unknown;
  #pending: Promise<void> | undefined;

  private constructor(res: Response, controller: AbortController) {
    this.status = res.status;
    this.headers = res.headers;
    this.#reader = res.body!.getReader();
    this.#controller = controller;
  }

  /** Opens a watch (or any streaming GET). */
  static async open(url: string, init: RequestInit = {}): Promise<WatchReader> {
    const controller = new AbortController();
    const res = await fetch(url, { ...init, signal: controller.signal });
    return new WatchReader(res, controller);
  }

  /** True once the body ended (cleanly or not). */
  get ended(): boolean {
    return this.#done;
  }

  #fill(): Promise<void> {
    this.#pending ??= this.#reader.read().then(
      ({ value, done }) => {
        this.#pending = undefined;
        if (done) this.#done = true;
        else this.#buffer += this.#decoder.decode(value, { stream: true });
      },
      (err: unknown) => {
        this.#pending = undefined;
        this.#done = true;
        this.#error = err;
      },
    );
    return this.#pending;
  }

  /**
   * The next complete line (without `\n`), `null` at the end of the stream, or rejects after
   * `timeoutMs` real milliseconds.
   */
  async nextLine(timeoutMs = 5_000): Promise<string | null> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const nl = this.#buffer.indexOf('\n');
      if (nl !== -1) {
        const line = this.#buffer.slice(0, nl);
        this.#buffer = this.#buffer.slice(nl + 1);
        return line;
      }
      if (this.#done) return null;
      const remaining = deadline - Date.now();
      if (remaining <= 0)
        throw new Error(`no watch line within ${timeoutMs}ms (buffered: ${JSON.stringify(this.#buffer)})`);
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        this.#fill(),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, remaining);
        }),
      ]);
      clearTimeout(timer);
    }
  }

  /** The next event, parsed. Rejects at the end of the stream. */
  async next(timeoutMs = 5_000): Promise<WatchLine> {
    const line = await this.nextLine(timeoutMs);
    if (line === null) {
      const cause = this.#error instanceof Error ? ` with ${this.#error.message}` : '';
      throw new Error(`watch stream ended${cause}`);
    }
    return JSON.parse(line) as WatchLine;
  }

  /** The next `n` events. */
  async take(n: number, timeoutMs = 5_000): Promise<WatchLine[]> {
    const out: WatchLine[] = [];
    for (let i = 0; i < n; i++) out.push(await this.next(timeoutMs));
    return out;
  }

  /** Resolves when nothing (no line, no end) arrives for `ms` real milliseconds; rejects otherwise. */
  async expectQuiet(ms = 100): Promise<void> {
    const line = await this.nextLine(ms).catch((err: unknown) => {
      if (err instanceof Error && err.message.startsWith('no watch line')) return undefined;
      throw err;
    });
    if (line !== undefined)
      throw new Error(`expected a quiet stream, got ${line === null ? 'its end' : line}`);
  }

  /** Reads every remaining line until the stream ends. */
  async readToEnd(timeoutMs = 5_000): Promise<StreamEnd> {
    const lines: string[] = [];
    for (;;) {
      const line = await this.nextLine(timeoutMs);
      if (line === null) break;
      lines.push(line);
    }
    const end: StreamEnd = { lines };
    if (this.#error !== undefined) end.error = this.#error;
    return end;
  }

  /** Whatever is buffered but not yet terminated by `\n`. */
  get partial(): string {
    return this.#buffer;
  }

  /** Aborts the request. */
  close(): void {
    this.#controller.abort();
    this.#reader.cancel().catch(() => undefined);
  }
}

/** Decodes a continue token (base64url JSON). */
export function decodeToken(token: string): { v: string; rv: number; start: string } {
  return JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as {
    v: string;
    rv: number;
    start: string;
  };
}

/**
 * The watch readers a test file opens (`readers.push(reader)`), each closed after its test. Call
 * once per file, at the top level.
 */
export function watchReaders(): WatchReader[] {
  const readers: WatchReader[] = [];
  afterEach(() => {
    for (const r of readers.splice(0)) r.close();
  });
  return readers;
}

/** Closes the server that `current()` returns after each test of the file (none when a test started none). */
export function closeAfterEach(current: () => { close(): Promise<void> } | undefined): void {
  afterEach(async () => {
    await current()?.close();
  });
}
