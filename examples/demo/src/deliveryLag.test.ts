import { DeliveryLag, formatMs } from './deliveryLag.js';

describe('delivery lag', () => {
  it('counts a write delivered when the handler sees that version or a later one, or the deletion', () => {
    let now = 0;
    const lag = new DeliveryLag(() => now);
    lag.wrote('a', '10');
    now = 100;
    lag.wrote('a', '11');
    lag.wrote('b', '12');
    expect(lag.current()).toBe(100);
    now = 150;
    lag.saw('a', '10'); // the first write, 150 ms later; the second still waits
    expect(lag.pending()).toBe(2);
    expect(lag.current()).toBe(50);
    now = 400;
    lag.saw('b', '20'); // a relist skipped to a later version: delivered
    lag.sawDeleted('a');
    expect(lag.pending()).toBe(0);
    expect(lag.current()).toBe(0);
    expect(lag.summary()).toEqual({ writes: 3, p50: 300, p99: 300, max: 300 });
    lag.saw('unknown', '1'); // initial list, not a demo write
    expect(lag.summary().writes).toBe(3);
  });

  it('formats durations for the live line', () => {
    expect([formatMs(3.4), formatMs(1234), formatMs(14_400)]).toEqual(['3 ms', '1.2 s', '14 s']);
  });
});
