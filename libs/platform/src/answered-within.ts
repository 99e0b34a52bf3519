/**
 * `work`, or a rejection when it has not settled `ms` after the call. The deadline is judged
 * after the I/O that arrived meanwhile has been handled (an immediate runs after the poll
 * phase): when this process's event loop was busy past the deadline (large answers rendered on
 * a loaded machine), the timer would otherwise fire before the answer already waiting on the
 * dependency's socket is read, and report down a dependency that answered in time.
 */
export function answeredWithin<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let immediate: NodeJS.Immediate | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      immediate = setImmediate(() => reject(new Error(`no answer within ${ms} ms`)));
    }, ms);
  });
  return Promise.race([work, timeout]).finally(() => {
    clearTimeout(timer);
    clearImmediate(immediate);
  });
}
