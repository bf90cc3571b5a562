/**
 * A push queue read as an async iterable: the producer pushes and ends, one reader takes items
 * in order and waits while the queue is empty. Holds what was pushed until it is read.
 */
export function eventStream<T>(): { push(item: T): void; end(): void; iterable: AsyncIterable<T> } {
  const queue: T[] = [];
  let ended = false;
  let wake: (() => void) | null = null;
  const signal = () => {
    wake?.();
    wake = null;
  };
  return {
    push(item) {
      if (ended) return;
      queue.push(item);
      signal();
    },
    end() {
      ended = true;
      signal();
    },
    iterable: {
      async *[Symbol.asyncIterator]() {
        while (true) {
          const item = queue.shift();
          if (item !== undefined) {
            yield item;
            continue;
          }
          if (ended) return;
          await new Promise<void>((resolve) => {
            wake = resolve;
          });
        }
      },
    },
  };
}
