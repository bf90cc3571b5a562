import type { Memory } from '../../../memory/index.ts';

/** `[id] content · category · importance 0.80 · #tags` — what the model reads. */
export function formatMemoryLine(memory: Memory): string {
  const parts = [
    `[${memory.id}] ${memory.content}`,
    memory.category,
    `importance ${memory.importance.toFixed(2)}`,
  ];
  if (memory.tags.length > 0) parts.push(memory.tags.map((tag) => `#${tag}`).join(' '));
  return parts.join(' · ');
}
