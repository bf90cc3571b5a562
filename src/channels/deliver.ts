import { StewardError } from '../errors.ts';
import type { DeliverySource } from './delivery-store.ts';
import type { Delivery, Gateway } from './gateway.ts';

let active: Gateway | null = null;

/** The gateway of this process's runtime, for `deliver` (set by the runtime, cleared on close). */
export function setActiveGateway(gateway: Gateway | null): void {
  active = gateway;
}

/**
 * Sends `message` (markdown) to the user's primary channel — the one set, else the one they
 * last wrote from — through the outbox, falling back to their next channel and then to their
 * dashboard inbox; a user with no channel finds it in their latest conversation. For everything
 * that is not a reply: scheduled runs, reminders, alerts. `deliveryId` names its receipt.
 */
export function deliver(
  userId: string,
  message: string,
  options: { source?: DeliverySource } = {},
): Promise<Delivery> {
  if (!active) {
    return Promise.reject(
      new StewardError('channels_not_started', 'deliver() needs a running Steward runtime.'),
    );
  }
  return active.deliver(userId, message, options);
}
