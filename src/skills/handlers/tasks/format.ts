import type { FieldChange, Task, TaskDetail, TaskLink } from '../../../tasks/index.ts';
import { localMinute } from '../../../time/index.ts';

/** `[id] title · status · priority · due YYYY-MM-DD · @assignee · #tags` — what the model reads. */
export function formatTaskLine(task: Task, today: string | null): string {
  const parts = [`[${task.id}] ${task.title}`, task.status, task.priority];
  if (task.dueDate) {
    const overdue =
      today !== null &&
      task.dueDate < today &&
      (task.status === 'todo' || task.status === 'in_progress' || task.status === 'blocked');
    parts.push(`due ${task.dueDate}${overdue ? ' (overdue)' : ''}`);
  }
  if (task.assignee) parts.push(`@${task.assignee}`);
  if (task.tags.length > 0) parts.push(task.tags.map((tag) => `#${tag}`).join(' '));
  if (task.recurrence) parts.push(`repeats ${task.recurrence}`);
  if (task.archivedAt) parts.push('archived');
  return parts.join(' · ');
}

const formatLink = (link: TaskLink) => `[${link.id}] ${link.title} (${link.status})`;

/** A task with everything known about it, for tasks.get. Timestamps in the user's zone. */
export function formatTaskDetail(task: TaskDetail, today: string | null, timezone: string): string {
  const lines = [formatTaskLine(task, today)];
  if (task.description) lines.push(`Description: ${task.description}`);
  if (task.parentId) lines.push(`Parent: ${task.parentId}`);
  if (task.dependsOn.length > 0) lines.push(`Depends on: ${task.dependsOn.map(formatLink).join('; ')}`);
  if (task.blocks.length > 0) lines.push(`Blocks: ${task.blocks.map(formatLink).join('; ')}`);
  if (task.subtasks.length > 0) lines.push(`Subtasks: ${task.subtasks.map(formatLink).join('; ')}`);
  const when = [
    `created ${localMinute(new Date(task.createdAt), timezone)}`,
    `updated ${localMinute(new Date(task.updatedAt), timezone)}`,
  ];
  if (task.completedAt) when.push(`completed ${localMinute(new Date(task.completedAt), timezone)}`);
  if (task.archivedAt) when.push(`archived ${localMinute(new Date(task.archivedAt), timezone)}`);
  lines.push(`${capitalize(when.join(' · '))}`);
  if (task.comments.length > 0) {
    lines.push(`Comments (${task.comments.length}):`);
    for (const comment of task.comments) {
      lines.push(
        `  ${localMinute(new Date(comment.createdAt), timezone)} ${comment.author}: ${comment.body}`,
      );
    }
  }
  if (task.history.length > 0) {
    lines.push('Recent history (newest first):');
    for (const entry of task.history) {
      lines.push(
        `  ${localMinute(new Date(entry.createdAt), timezone)} ${entry.actor} ${formatChange(entry)}`,
      );
    }
  }
  return lines.join('\n');
}

/** `status: todo → done`, `created: "Title"`, `tags: [a] → [a, b]`. */
export function formatChange(change: FieldChange): string {
  if (change.field === 'created') {
    const origin = (change.newValue as { previousOccurrence?: string } | null)?.previousOccurrence;
    return origin ? `created it as the next occurrence of ${origin}` : 'created the task';
  }
  if (change.field === 'next_occurrence') return `completed it; next occurrence ${String(change.newValue)}`;
  return `${change.field}: ${formatValue(change.oldValue)} → ${formatValue(change.newValue)}`;
}

function formatValue(value: unknown): string {
  if (value === null || value === undefined) return 'none';
  if (Array.isArray(value)) return `[${value.join(', ')}]`;
  if (typeof value === 'string') return value.length > 60 ? `${value.slice(0, 57)}…` : value;
  return JSON.stringify(value);
}

const capitalize = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);
