/** The heap in use after four full GCs, for the heap benchmarks (the process runs with `node --expose-gc`). */
export function gcHeap(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run with node --expose-gc');
  for (let i = 0; i < 4; i++) gc();
  return process.memoryUsage().heapUsed;
}
