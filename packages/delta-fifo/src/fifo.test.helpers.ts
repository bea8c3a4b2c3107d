import { DeletedFinalStateUnknown } from '@kinformer/core';
import type { KeyListerGetter } from './fifoOptions.js';
import type { Deltas, PopProcessFunc } from './queue.js';

// The fixtures of the FIFO tests (client-go's testFifoObject / mkFifoObj / testFifoObjectKeyFunc /
// literalListerGetter), shared by deltaFifo, realFifo, atomicFifo and the scenario table.

export interface TestObj {
  name: string;
  val: unknown;
}
export const mk = (name: string, val: unknown): TestObj => ({ name, val });
export const keyFunction = (o: TestObj): string => o.name;
export const tomb = (key: string, obj: TestObj): DeletedFinalStateUnknown<TestObj> =>
  new DeletedFinalStateUnknown(key, obj);

/** client-go's literalListerGetter: a fixed list of known objects. */
export function literalLister(objs: readonly TestObj[]): KeyListerGetter<TestObj> {
  return {
    listKeys: () => objs.map((o) => o.name),
    getByKey: (key) => objs.find((o) => o.name === key),
  };
}

/** What the helpers below need of a queue. */
interface Poppable<T> {
  pop(process: PopProcessFunc<T>): Promise<Deltas<T>>;
  length(): number;
}

/** client-go's Pop(queue) helper: pop with a no-op process function. */
export function pop<T>(f: Poppable<T>): Promise<Deltas<T>> {
  return f.pop(() => undefined);
}

/** client-go's testPop: the newest object of the next pop. */
export async function popNewest(f: Poppable<TestObj>): Promise<TestObj> {
  const deltas = await pop(f);
  return deltas[deltas.length - 1]!.object as TestObj;
}

/** Pops everything queued, one element per popped item. */
export async function drain<T>(f: Poppable<T>): Promise<Deltas<T>[]> {
  const out: Deltas<T>[] = [];
  while (f.length() > 0) out.push(await pop(f));
  return out;
}

/** Resolves on the next macrotask (lets every pending promise callback run first). */
export const nextTick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
