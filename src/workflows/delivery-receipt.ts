/*
 * What a delivery of a scheduled run reports. Declared here, where the scheduler needs it;
 * channels (which own the deliveries table) implement it.
 */

export type DeliveryStatus = 'pending' | 'delivered' | 'failed' | 'ambiguous';

/** One channel tried, in order. */
export type DeliveryAttempt = {
  channel: string;
  chat_id: string | null;
  status: 'pending' | 'delivered' | 'failed' | 'ambiguous';
  error: string | null;
  at: string;
};

/** Where a delivery went and whether it arrived (the receipt `steward schedules` and the dashboard show). */
export type DeliveryReceipt = {
  id: string;
  source: string;
  status: DeliveryStatus;
  /** Where it is being sent or where it ended: a channel, `conversation`, or `inbox`. */
  channel: string | null;
  /** It arrived on a channel other than the first one tried. */
  fallback: boolean;
  /** A copy waits in the user's dashboard inbox (nothing arrived, or the outcome is unknown). */
  inbox: boolean;
  attempts: DeliveryAttempt[];
  /** What was delivered (a workflow run's output, the reminder). */
  text: string;
  created_at: string;
  settled_at: string | null;
};
