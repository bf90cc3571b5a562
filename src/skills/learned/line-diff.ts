/** Lines of context kept around each change. */
const CONTEXT = 2;
/** Above this many line pairs the diff replaces the whole text instead of aligning lines. */
const MAX_CELLS = 4_000_000;

type Edit = { kind: ' ' | '-' | '+'; line: string; before: number; after: number };

/**
 * A unified diff (`@@ -a,b +c,d @@` hunks, `-`/`+`/space lines) from `before` to `after`, for
 * people to read in a skill's history. Empty when the texts are equal. Lines are aligned by a
 * longest common subsequence; pages are small (a skill body is capped), so quadratic is fine.
 */
export function lineDiff(before: string, after: string): string {
  if (before === after) return '';
  const a = splitLines(before);
  const b = splitLines(after);
  const edits = align(a, b);
  const hunks: string[] = [];
  let index = 0;
  while (index < edits.length) {
    if (edits[index]!.kind === ' ') {
      index++;
      continue;
    }
    let start = Math.max(0, index - CONTEXT);
    // A hunk runs until more than 2×CONTEXT unchanged lines separate it from the next change.
    let end = index;
    let unchanged = 0;
    for (let next = index; next < edits.length; next++) {
      if (edits[next]!.kind === ' ') {
        unchanged++;
        if (unchanged > CONTEXT * 2) break;
      } else {
        unchanged = 0;
        end = next;
      }
    }
    end = Math.min(edits.length - 1, end + CONTEXT);
    while (start > 0 && edits[start - 1]!.kind !== ' ') start--;
    const slice = edits.slice(start, end + 1);
    hunks.push(hunk(slice), ...slice.map((edit) => `${edit.kind}${edit.line}`));
    index = end + 1;
  }
  return hunks.join('\n');
}

function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

function hunk(edits: readonly Edit[]): string {
  const removed = edits.filter((edit) => edit.kind !== '+');
  const added = edits.filter((edit) => edit.kind !== '-');
  const first = edits[0]!;
  const beforeStart = removed.length ? removed[0]!.before + 1 : first.before;
  const afterStart = added.length ? added[0]!.after + 1 : first.after;
  return `@@ -${beforeStart},${removed.length} +${afterStart},${added.length} @@`;
}

function align(a: readonly string[], b: readonly string[]): Edit[] {
  if (a.length * b.length > MAX_CELLS) {
    return [
      ...a.map((line, i) => ({ kind: '-' as const, line, before: i, after: 0 })),
      ...b.map((line, j) => ({ kind: '+' as const, line, before: a.length, after: j })),
    ];
  }
  // lengths[i][j]: the longest common subsequence of a[i..] and b[j..].
  const width = b.length + 1;
  const lengths = new Uint32Array((a.length + 1) * width);
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lengths[i * width + j] =
        a[i] === b[j]
          ? lengths[(i + 1) * width + j + 1]! + 1
          : Math.max(lengths[(i + 1) * width + j]!, lengths[i * width + j + 1]!);
    }
  }
  const edits: Edit[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      edits.push({ kind: ' ', line: a[i]!, before: i++, after: j++ });
    } else if (
      j < b.length &&
      (i === a.length || lengths[i * width + j + 1]! >= lengths[(i + 1) * width + j]!)
    ) {
      edits.push({ kind: '+', line: b[j]!, before: i, after: j++ });
    } else {
      edits.push({ kind: '-', line: a[i]!, before: i++, after: j });
    }
  }
  // Removals before additions within a run of changes, as diff tools print them.
  for (let start = 0; start < edits.length; ) {
    if (edits[start]!.kind === ' ') {
      start++;
      continue;
    }
    let end = start;
    while (end < edits.length && edits[end]!.kind !== ' ') end++;
    const run = edits.slice(start, end);
    edits.splice(
      start,
      run.length,
      ...run.filter((e) => e.kind === '-'),
      ...run.filter((e) => e.kind === '+'),
    );
    start = end;
  }
  return edits;
}
