import { errorMessage } from '../errors.ts';
import { type Logger, redactString, silentLogger } from '../logging/index.ts';
import { type Alert, type AlertDestination, atLeast, higher } from './alert-types.ts';

export type AlertRouterOptions = {
  /** Read at every delivery, so configuration changes apply at once. */
  destinations: () => readonly AlertDestination[];
  /** Throttle window per dedup key. */
  throttleMs: () => number;
  /** Configured secret values, masked in every alert text. */
  secrets?: () => readonly string[];
  logger?: Logger;
  /** Attempts per delivery (first try included) before it is dropped and logged. */
  maxAttempts?: number;
  /** First retry delay; doubles after each failure. */
  retryBaseMs?: number;
  /** Deliveries waiting beyond this are dropped, oldest first. */
  maxQueued?: number;
};

type Window = { timer: NodeJS.Timeout; suppressed: number; last: Alert; severity: Alert['severity'] };
type Delivery = { destination: AlertDestination; text: string; alert: Alert; attempt: number };

const MAX_TEXT = 600;

/** `[ERROR] Steward: title — detail`, redacted and cut to a short summary. */
export function formatAlert(alert: Alert, secrets: readonly string[]): string {
  const head = `[${alert.severity.toUpperCase()}] Steward: ${alert.title}`;
  const text = alert.detail ? `${head}\n${alert.detail}` : head;
  const clean = redactString(text, secrets);
  return clean.length > MAX_TEXT ? `${clean.slice(0, MAX_TEXT - 1)}…` : clean;
}

/**
 * Routes alerts to destinations by severity, de-duplicated and throttled per key: the first
 * alert of a key goes out at once, later ones within the window are counted, and when the
 * window ends one "N more" summary goes out (opening a new window) or the key is forgotten.
 * `raise` never blocks and never throws: deliveries are queued and retried with backoff, so a
 * destination that is down cannot slow or fail the caller.
 */
export class AlertRouter {
  readonly #options: AlertRouterOptions;
  readonly #logger: Logger;
  readonly #windows = new Map<string, Window>();
  readonly #queue: Delivery[] = [];
  readonly #retrying = new Set<NodeJS.Timeout>();
  readonly #stopping = new AbortController();
  #active = 0;

  constructor(options: AlertRouterOptions) {
    this.#options = options;
    this.#logger = options.logger ?? silentLogger();
  }

  raise(alert: Alert): void {
    if (this.#stopping.signal.aborted) return;
    const open = this.#windows.get(alert.key);
    if (open) {
      open.suppressed++;
      open.last = alert;
      open.severity = higher(open.severity, alert.severity);
      return;
    }
    this.#openWindow(alert);
    this.#dispatch(alert);
  }

  /** Resolves once every queued delivery was sent or given up (tests, shutdown). */
  async flush(): Promise<void> {
    while (this.#queue.length > 0 || this.#active > 0 || this.#retrying.size > 0) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  /** Stops timers and retries; pending deliveries are dropped. */
  close(): void {
    this.#stopping.abort();
    for (const window of this.#windows.values()) clearTimeout(window.timer);
    this.#windows.clear();
    for (const timer of this.#retrying) clearTimeout(timer);
    this.#retrying.clear();
    this.#queue.length = 0;
  }

  #openWindow(alert: Alert): void {
    const timer = setTimeout(() => this.#closeWindow(alert.key), this.#options.throttleMs());
    timer.unref();
    this.#windows.set(alert.key, { timer, suppressed: 0, last: alert, severity: alert.severity });
  }

  #closeWindow(key: string): void {
    const window = this.#windows.get(key);
    this.#windows.delete(key);
    if (!window || window.suppressed === 0 || this.#stopping.signal.aborted) return;
    const summary: Alert = {
      severity: window.severity,
      key,
      title: `${window.suppressed} more: ${window.last.title}`,
      detail: window.last.detail,
    };
    this.#openWindow(summary);
    this.#dispatch(summary);
  }

  #dispatch(alert: Alert): void {
    const text = formatAlert(alert, this.#options.secrets?.() ?? []);
    const targets = this.#options
      .destinations()
      .filter((destination) => atLeast(alert.severity, destination.minSeverity));
    if (targets.length === 0) {
      this.#logger.warn({ alert: alert.key, severity: alert.severity }, `alert with no destination: ${text}`);
      return;
    }
    this.#logger.info({ alert: alert.key, severity: alert.severity, to: targets.map((t) => t.name) }, text);
    for (const destination of targets) this.#enqueue({ destination, text, alert, attempt: 1 });
  }

  #enqueue(delivery: Delivery): void {
    const max = this.#options.maxQueued ?? 1_000;
    if (this.#queue.length >= max) {
      const dropped = this.#queue.shift()!;
      this.#logger.warn(
        { alert: dropped.alert.key, to: dropped.destination.name },
        'alert queue full; dropped',
      );
    }
    this.#queue.push(delivery);
    void this.#drain();
  }

  async #drain(): Promise<void> {
    if (this.#active > 0) return;
    this.#active++;
    try {
      for (let next = this.#queue.shift(); next; next = this.#queue.shift()) await this.#attempt(next);
    } finally {
      this.#active--;
    }
  }

  async #attempt(delivery: Delivery): Promise<void> {
    const { destination, text, alert, attempt } = delivery;
    try {
      await destination.send(text, alert, this.#stopping.signal);
    } catch (error) {
      if (this.#stopping.signal.aborted) return;
      const secrets = this.#options.secrets?.() ?? [];
      const reason = redactString(errorMessage(error), secrets);
      const maxAttempts = this.#options.maxAttempts ?? 6;
      if (attempt >= maxAttempts) {
        this.#logger.error(
          { alert: alert.key, to: destination.name, attempts: attempt, reason },
          'alert not delivered; giving up',
        );
        return;
      }
      const delay = (this.#options.retryBaseMs ?? 2_000) * 2 ** (attempt - 1);
      this.#logger.warn(
        { alert: alert.key, to: destination.name, reason, retryInMs: delay },
        'alert delivery failed',
      );
      const timer = setTimeout(() => {
        this.#retrying.delete(timer);
        this.#enqueue({ ...delivery, attempt: attempt + 1 });
      }, delay);
      timer.unref();
      this.#retrying.add(timer);
    }
  }
}
