import { EventEmitter } from 'node:events';
import { settle, waitFor, within } from './waitFor.js';

describe('waitFor', () => {
  it('resolves at once when the condition already holds, and when it turns true later', async () => {
    await waitFor(() => true);
    let ready = false;
    setTimeout(() => (ready = true), 5);
    await waitFor(() => ready, 'ready');
    expect(ready).toBe(true);
  });

  it('wakes on an event of a wake source and removes its listener', async () => {
    const emitter = new EventEmitter();
    let ready = false;
    const waiting = waitFor(() => ready, {
      what: 'the change event',
      intervalMs: 60_000, // only the event can wake it in time
      wakeOn: [{ emitter, events: ['change'] }],
    });
    expect(emitter.listenerCount('change')).toBe(1);
    ready = true;
    emitter.emit('change');
    await waiting;
    expect(emitter.listenerCount('change')).toBe(0);
  });

  it('rejects after its bound with what it waited for and the described state', async () => {
    await expect(
      waitFor(() => false, { what: 'never', timeoutMs: 20, describe: () => ({ n: 1 }) }),
    ).rejects.toThrow('timed out after 20 ms waiting for never: {"n":1}');
    await expect(waitFor(() => false, 'the short form', 10)).rejects.toThrow('waiting for the short form');
  });

  it('rejects as soon as the condition throws', async () => {
    const boom = new Error('boom');
    await expect(
      waitFor(() => {
        throw boom;
      }),
    ).rejects.toBe(boom);
  });
});

describe('within', () => {
  it('settles as the promise does, or rejects naming what did not settle', async () => {
    await expect(within(Promise.resolve(7), 'seven')).resolves.toBe(7);
    await expect(within(Promise.reject(new Error('no')), 'a rejection')).rejects.toThrow('no');
    await expect(within(new Promise(() => undefined), 'a hang', 10)).rejects.toThrow(
      'a hang: not settled after 10 ms',
    );
  });
});

describe('settle', () => {
  it('lets queued callbacks run', async () => {
    let ran = false;
    setImmediate(() => (ran = true));
    await settle();
    expect(ran).toBe(true);
  });
});
