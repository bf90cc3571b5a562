/**
 * The MCP servers a one-shot command needs started: every one for `get_skill` (lists and
 * searches show them all), the one whose domain the command names, or none. `steward run
 * tasks.search` then never waits for an MCP server.
 */
export function serversNeededBy(command: string, configured: readonly string[]): string[] {
  const head = command.trim().split(/[\s:]/, 1)[0] ?? '';
  if (head === 'get_skill' || head.startsWith('```')) return [...configured];
  const domain = head.split('.', 1)[0]!;
  return configured.includes(domain) ? [domain] : [];
}
