import type { MiddlewareHandler } from 'hono';

/**
 * Requests in flight, for a graceful stop: once draining, new requests get 503 with
 * Retry-After (chat platforms redeliver webhooks), and `idle()` waits for the rest to finish.
 */
export class HttpLifecycle {
  #inFlight = 0;
  #draining = false;
  #waiters: Array<() => void> = [];

  get draining(): boolean {
    return this.#draining;
  }

  middleware(): MiddlewareHandler {
    return async (c, next) => {
      if (this.#draining && c.req.path !== '/healthz') {
        c.header('Retry-After', '5');
        return c.json(
          { error: 'unavailable', message: 'Steward is restarting; try again in a few seconds.' },
          503,
        );
      }
      this.#inFlight++;
      try {
        await next();
      } finally {
        this.#inFlight--;
        if (this.#inFlight === 0) for (const wake of this.#waiters.splice(0)) wake();
      }
    };
  }

  startDraining(): void {
    this.#draining = true;
  }

  /** Resolves when no request is in flight, or after `timeoutMs`. */
  idle(timeoutMs: number): Promise<void> {
    if (this.#inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.#waiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}
