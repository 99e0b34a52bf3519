import { mapTimeSliced, TimeSlice } from './time-sliced';

/** Busy for `ms` of wall time: synchronous work such as mapping and serialising a batch. */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

describe('TimeSlice', () => {
  it('lets concurrent slicers take turns: one slice per turn of the event loop, whatever their number', async () => {
    // Counts the turns of the event loop: an immediate that queues itself runs once a turn.
    let turn = 0;
    let counting = true;
    const count = () => {
      turn += 1;
      if (counting) setImmediate(count);
    };
    setImmediate(count);
    const turnsOfSlices: number[] = [];
    const slicer = async () => {
      const slice = new TimeSlice(2);
      for (let step = 0; step < 20; step++) {
        busy(1);
        if (!slice.spent) continue;
        await slice.next();
        turnsOfSlices.push(turn);
      }
    };
    try {
      await Promise.all([slicer(), slicer(), slicer(), slicer()]);
    } finally {
      counting = false;
    }
    // Yielding each on its own, the four would resume in the same turn, one after the other.
    expect(turnsOfSlices.length).toBeGreaterThan(8);
    expect(new Set(turnsOfSlices).size).toBe(turnsOfSlices.length);
  });

  it('gives each of concurrent maps its own results, in order', async () => {
    const results = await Promise.all(
      [1, 2, 3].map((factor) =>
        mapTimeSliced(
          Array.from({ length: 30 }, (_, i) => i),
          (i) => (busy(0.5), i * factor),
          2,
        ),
      ),
    );
    expect(results).toEqual(
      [1, 2, 3].map((factor) => Array.from({ length: 30 }, (_, i) => i * factor)),
    );
  });
});
