/**
 * Model-based property test of {@link ReconcileQueue}: random add / addAfter / get / done / clock
 * advances against a reference model of its contract. After every command the model checks
 * exclusivity (a key being processed is never handed out), no lost key (the ready, waiting and
 * processing counts match; a final drain hands out every key still owed a run), coalescing (a key
 * is queued at most once however often it is added) and priority order (get returns the highest
 * priority, then the earliest to become ready at that priority, with the coalesced reasons).
 */
import { FakeClock } from '@kinformer/core/testing';
import fc from 'fast-check';
import { ReconcileQueue } from './reconcileQueue.js';
import type { QueueItem } from './reconcileQueue.js';

interface ModelKey {
  status: 'ready' | 'waiting' | 'processing';
  priority: number;
  /** Ready: position among keys of its priority (set when it became ready or its priority rose). */
  order: number;
  /** Waiting (or processing and dirty with a delay): when it is due. */
  readyAt: number | undefined;
  /** Waiting: tie-break among keys due at the same time (when the due time was set). */
  waitOrder: number;
  dirty: boolean;
  reasons: string[];
}

class Model {
  readonly keys = new Map<string, ModelKey>();
  now = 0;
  seq = 0;

  count(status: ModelKey['status']): number {
    let n = 0;
    for (const k of this.keys.values()) if (k.status === status) n++;
    return n;
  }

  add(key: string, priority: number, delay: number, reason: string): void {
    const k = this.keys.get(key);
    if (k === undefined) {
      const fresh: ModelKey = {
        status: 'ready',
        priority,
        order: 0,
        readyAt: undefined,
        waitOrder: 0,
        dirty: false,
        reasons: [reason],
      };
      this.keys.set(key, fresh);
      this.place(fresh, delay);
      return;
    }
    if (!k.reasons.includes(reason)) k.reasons.push(reason);
    if (k.status === 'processing') {
      if (!k.dirty) {
        // The first add during a run: this add's priority and due time, for the next run.
        k.dirty = true;
        k.priority = priority;
        k.readyAt = delay > 0 ? this.now + delay : undefined;
      } else {
        // Further adds coalesce: the highest priority and the earliest due time ("now" wins).
        k.priority = Math.max(k.priority, priority);
        if (delay <= 0) k.readyAt = undefined;
        else if (k.readyAt !== undefined) k.readyAt = Math.min(k.readyAt, this.now + delay);
      }
      return;
    }
    if (k.status === 'ready') {
      if (priority > k.priority) {
        k.priority = priority;
        k.order = ++this.seq;
      }
      return;
    }
    // Waiting.
    k.priority = Math.max(k.priority, priority);
    if (delay <= 0) {
      k.readyAt = undefined;
      k.status = 'ready';
      k.order = ++this.seq;
    } else if (this.now + delay < k.readyAt!) {
      k.readyAt = this.now + delay;
      k.waitOrder = ++this.seq;
    }
  }

  place(k: ModelKey, delay: number): void {
    if (delay > 0) {
      k.status = 'waiting';
      k.readyAt = this.now + delay;
      k.waitOrder = ++this.seq;
    } else {
      k.status = 'ready';
      k.readyAt = undefined;
      k.order = ++this.seq;
    }
  }

  /** The key get() must return: highest priority, then earliest order. */
  next(): [string, ModelKey] | undefined {
    let best: [string, ModelKey] | undefined;
    for (const e of this.keys) {
      const k = e[1];
      if (k.status !== 'ready') continue;
      if (
        best === undefined ||
        k.priority > best[1].priority ||
        (k.priority === best[1].priority && k.order < best[1].order)
      )
        best = e;
    }
    return best;
  }

  take(): { key: string; reasons: string[]; priority: number } | undefined {
    const e = this.next();
    if (e === undefined) return undefined;
    const [key, k] = e;
    k.status = 'processing';
    const reasons = k.reasons;
    k.reasons = [];
    return { key, reasons, priority: k.priority };
  }

  done(key: string): void {
    const k = this.keys.get(key)!;
    if (!k.dirty) {
      this.keys.delete(key);
      return;
    }
    k.dirty = false;
    const due = k.readyAt;
    this.place(k, due === undefined ? 0 : due - this.now);
  }

  advance(ms: number): void {
    const target = this.now + ms;
    for (;;) {
      // Keys fall due in (due time, then when the due time was set) order, one timer at a time.
      let best: ModelKey | undefined;
      for (const k of this.keys.values()) {
        if (k.status !== 'waiting' || k.readyAt! > target) continue;
        if (
          best === undefined ||
          k.readyAt! < best.readyAt! ||
          (k.readyAt === best.readyAt && k.waitOrder < best.waitOrder)
        )
          best = k;
      }
      if (best === undefined) break;
      this.now = Math.max(this.now, best.readyAt!);
      best.status = 'ready';
      best.readyAt = undefined;
      best.order = ++this.seq;
    }
    this.now = target;
  }
}

interface Real {
  queue: ReconcileQueue;
  clock: FakeClock;
}

/** Takes the value of a promise that is already settled (get() with a ready key resolves at once). */
async function settled<T>(p: Promise<T>): Promise<{ value: T } | undefined> {
  const pending = Symbol('pending');
  const v = await Promise.race([p, Promise.resolve().then(() => pending)]);
  return v === pending ? undefined : { value: v as T };
}

function checkCounts(m: Model, r: Real): void {
  expect({
    ready: r.queue.length(),
    waiting: r.queue.waitingLength(),
    processing: r.queue.processing(),
  }).toEqual({ ready: m.count('ready'), waiting: m.count('waiting'), processing: m.count('processing') });
}

class AddCommand implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly key: string,
    readonly priority: number,
    readonly delay: number,
    readonly reason: string,
  ) {}
  check(): boolean {
    return true;
  }
  async run(m: Model, r: Real): Promise<void> {
    m.add(this.key, this.priority, this.delay, this.reason);
    r.queue.add(this.key, {
      priority: this.priority,
      reason: this.reason,
      ...(this.delay > 0 ? { afterMs: this.delay } : {}),
    });
    await Promise.resolve();
    checkCounts(m, r);
  }
  toString(): string {
    return `add(${this.key}, p=${this.priority}, after=${this.delay}, ${this.reason})`;
  }
}

class GetCommand implements fc.AsyncCommand<Model, Real> {
  check(m: Model): boolean {
    return m.count('ready') > 0;
  }
  async run(m: Model, r: Real): Promise<void> {
    const processing = new Set([...m.keys].filter(([, k]) => k.status === 'processing').map(([key]) => key));
    const expected = m.take()!;
    const got = await settled(r.queue.get());
    expect(got).toBeDefined();
    const item: QueueItem | undefined = got!.value;
    // Exclusivity: never a key that a worker holds.
    expect(processing.has(item!.key)).toBe(false);
    // Priority order and coalesced reasons.
    expect(item).toEqual(expected);
    checkCounts(m, r);
  }
  toString(): string {
    return 'get()';
  }
}

class DoneCommand implements fc.AsyncCommand<Model, Real> {
  constructor(readonly pick: number) {}
  check(m: Model): boolean {
    return m.count('processing') > 0;
  }
  async run(m: Model, r: Real): Promise<void> {
    const held = [...m.keys].filter(([, k]) => k.status === 'processing').map(([key]) => key);
    const key = held[this.pick % held.length]!;
    m.done(key);
    r.queue.done(key);
    await Promise.resolve();
    checkCounts(m, r);
  }
  toString(): string {
    return `done(#${this.pick})`;
  }
}

class AdvanceCommand implements fc.AsyncCommand<Model, Real> {
  constructor(readonly ms: number) {}
  check(): boolean {
    return true;
  }
  async run(m: Model, r: Real): Promise<void> {
    m.advance(this.ms);
    r.clock.advance(this.ms);
    await Promise.resolve();
    checkCounts(m, r);
  }
  toString(): string {
    return `advance(${this.ms})`;
  }
}

const keyArb = fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f');
const priorityArb = fc.constantFrom(-100, 0, 0, 5, 10);
const reasonArb = fc.constantFrom('Added', 'Updated', 'Deleted', 'retry');
const commands = [
  fc.tuple(keyArb, priorityArb, reasonArb).map(([k, p, why]) => new AddCommand(k, p, 0, why)),
  fc
    .tuple(keyArb, priorityArb, fc.integer({ min: 1, max: 50 }), reasonArb)
    .map(([k, p, d, why]) => new AddCommand(k, p, d, why)),
  fc.constant(new GetCommand()),
  fc.constant(new GetCommand()),
  fc.nat().map((n) => new DoneCommand(n)),
  fc.integer({ min: 0, max: 60 }).map((ms) => new AdvanceCommand(ms)),
];

describe('ReconcileQueue (model-based)', () => {
  it('matches the model: exclusivity, no lost key, coalescing, priority order', async () => {
    await fc.assert(
      fc.asyncProperty(fc.commands(commands, { maxCommands: 300, size: 'max' }), async (cmds) => {
        const m = new Model();
        const clock = new FakeClock();
        const r: Real = { queue: new ReconcileQueue({ clock }), clock };
        await fc.asyncModelRun(() => ({ model: m, real: r }), cmds);
        // No lost key: drain — every key still owed a run (ready, waiting, or dirty while held)
        // comes out, exactly once per owed run, and then the queue is empty.
        for (let guard = 0; guard < 1000 && m.keys.size > 0; guard++) {
          const held = [...m.keys].filter(([, k]) => k.status === 'processing').map(([key]) => key);
          for (const key of held) {
            m.done(key);
            r.queue.done(key);
          }
          m.advance(1000);
          r.clock.advance(1000);
          for (;;) {
            const expected = m.take();
            if (expected === undefined) break;
            const got = await settled(r.queue.get());
            expect(got?.value).toEqual(expected);
          }
          checkCounts(m, r);
        }
        expect(m.keys.size).toBe(0);
        expect(r.queue.length() + r.queue.waitingLength() + r.queue.processing()).toBe(0);
        expect(await settled(r.queue.get())).toBeUndefined(); // nothing left: get() waits
      }),
      { numRuns: 100 },
    );
  });

  it('a key added during its run is handed out once more after done, never twice at once', async () => {
    const clock = new FakeClock();
    const q = new ReconcileQueue({ clock });
    q.add('k', { reason: 'first' });
    const first = await q.get();
    for (let i = 0; i < 100; i++) q.add('k', { reason: `update ${i % 3}` });
    expect(q.length()).toBe(0); // held: not ready again while processing
    const second = q.get();
    expect(await settled(second)).toBeUndefined();
    q.done(first!.key);
    expect((await settled(second))?.value?.reasons).toEqual(['update 0', 'update 1', 'update 2']);
    q.done('k');
    expect(q.length() + q.waitingLength() + q.processing()).toBe(0);
  });

  it('keeps the deprecated len()/waitingLen() as aliases of length()/waitingLength()', () => {
    const clock = new FakeClock();
    const q = new ReconcileQueue({ clock });
    q.add('ready');
    q.add('later', { afterMs: 1_000 });
    expect([q.len(), q.waitingLen()]).toEqual([q.length(), q.waitingLength()]);
    expect([q.length(), q.waitingLength()]).toEqual([1, 1]);
  });
});
