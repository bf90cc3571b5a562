export {
  type ConverseDeps,
  type Conversed,
  converse,
  type Exchange,
  type Message,
  type MessageOptions,
  turnOutcome,
} from './converse.ts';
export type { TurnEvent } from './events.ts';
export {
  type Receipt,
  type ReceiptJson,
  type ReceiptStatus,
  receiptLine,
  receiptsJson,
  withReceiptLines,
} from './receipts.ts';
export { recentTurns, type TurnListItem } from './recent-turns.ts';
export type { TurnMission } from './run-mission.ts';
export { LlmSentinel } from './sentinel-llm.ts';
export {
  SPOKEN_TURN_NOTE,
  TurnEngine,
  type TurnInput,
  type TurnObserver,
  type TurnOutcome,
  type TurnRef,
} from './turn-engine.ts';
export { type HubListener, TurnHub } from './turn-hub.ts';
export { messageProblem } from './turn-start.ts';
export { type TurnTrace, turnTrace } from './turn-trace.ts';
export { getTurn, openTurnIds } from './turns.ts';
