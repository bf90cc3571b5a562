export {
  appendMessage,
  type Conversation,
  createConversation,
  getConversation,
  latestConversation,
  type NewMessage,
  recentMessages,
  type StoredMessage,
  setConversationMode,
  setMessageTurn,
} from './conversations.ts';
