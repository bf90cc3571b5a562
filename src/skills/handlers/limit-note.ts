/**
 * What a search result says when it returned as many items as it was allowed to: there may be
 * more, never "that is all". Empty when fewer came back.
 */
export function limitNote(count: number, limit: number, max: number): string {
  if (count < limit) return '';
  return limit < max
    ? `\nShowing the first ${limit}: there may be more. Narrow the search, or raise --limit (at most ${max}).`
    : `\nShowing the first ${limit} (the most one search returns): there may be more. Narrow the search.`;
}
