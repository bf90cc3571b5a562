const FENCE = /^\s*(```|~~~)/;
const HEADING = /^(#{1,6})\s+(.*?)\s*#*\s*$/;

/**
 * The lines of the `## <title>` section of a markdown body (title matched case-insensitively),
 * up to the next heading of level 1 or 2. Headings inside code fences do not end the section.
 * Returns null when the body has no such section.
 */
export function markdownSection(body: string, title: string): string[] | null {
  const wanted = title.trim().toLowerCase();
  const lines = body.split(/\r?\n/);
  let inFence = false;
  let collected: string[] | null = null;
  for (const line of lines) {
    if (FENCE.test(line)) {
      inFence = !inFence;
      collected?.push(line);
      continue;
    }
    const heading = inFence ? null : HEADING.exec(line);
    if (heading && heading[1]!.length <= 2) {
      if (collected) return collected;
      if (heading[1]!.length === 2 && heading[2]!.toLowerCase() === wanted) collected = [];
      continue;
    }
    collected?.push(line);
  }
  return collected;
}
