-- Memory embeddings, only where the vector extension exists (the server may lack it).
--
-- A table of its own rather than a column of memory_entries, so memory_entries has the same
-- columns on every backend and the Drizzle schema describes it exactly; raw SQL in
-- src/memory/store/ owns this table. The model and the time of embedding live on
-- memory_entries (embedding_model, embedded_at).
--
-- `vector` without dimensions, so any embeddings model works (queries compare only rows of
-- the query's model and dimension count). HNSW and IVFFlat indexes need fixed dimensions,
-- so there is no vector index: search is an exact scan of the user's embedded memories,
-- which is fast enough at personal-assistant sizes (bench/memory-search.bench.ts measures
-- 10k and 100k memories).
CREATE TABLE memory_embeddings (
  memory_id text PRIMARY KEY REFERENCES memory_entries (id),
  embedding vector NOT NULL
);
