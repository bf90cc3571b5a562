/** Long-term memory: every function that reads or writes memories is scoped to one user. */
export { type DecayOptions, type DecayResult, decayAndArchive } from './decay-and-archive.ts';
export {
  type EmbedPendingOptions,
  embedPendingMemories,
  llmEmbedder,
  type PendingEmbedding,
  pendingEmbeddings,
  storeEmbedding,
} from './embeddings.ts';
export {
  type EntityInput,
  type EntityRecord,
  type EntityRelation,
  type RecordedEntities,
  type RelatedToEntity,
  type RelationInput,
  recordEntities,
  relatedToEntity,
} from './entity-graph.ts';
export type { FoundMessage } from './found-messages.ts';
export { memoriesForContext } from './memories-for-context.ts';
export { type DayRange, queryDayRange } from './query-dates.ts';
export {
  DUPLICATE_SIMILARITY,
  type NewMemory,
  type SaveMemoryOptions,
  type SaveMemoryResult,
  saveMemory,
} from './save-memory.ts';
export {
  MAX_SEARCH_LIMIT,
  type MemorySearch,
  type MemorySearchHit,
  type MemorySearchResult,
  nearestMemoryIds,
  RECALL_SOURCES,
  type RecallHit,
  type RecallSearch,
  type RecallSearchResult,
  type RecallSource,
  type SearchMemoriesOptions,
  searchMemories,
  searchRecall,
} from './search-memories.ts';
export {
  ENTITY_KINDS,
  type Entity,
  type EntityKind,
  MEMORY_CATEGORIES,
  MEMORY_SOURCE_TYPES,
  type Memory,
  type MemoryCategory,
  type MemorySourceType,
  type QueryEmbedder,
} from './types.ts';
export {
  type BuiltVectorIndex,
  buildVectorIndexes,
  VECTOR_INDEX_MIN_ROWS,
  vectorIndexName,
  vectorIndexRows,
} from './vector-index.ts';
