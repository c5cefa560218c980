// Runs async tasks one at a time, in the order they were queued.

export type Queue = <T>(task: () => Promise<T>) => Promise<T>;

export function createQueue(): Queue {
  let last: Promise<unknown> = Promise.resolve();
  return (task) => {
    const result = last.then(task);
    // The next task waits for this one whether it succeeds or fails.
    last = result.catch(() => {});
    return result;
  };
}
