/* What a learned-skill change refused says: the problem, and how to go on. */

export function refused(problem: string): { ok: false; problem: string } {
  return { ok: false, problem };
}

export function dangerous(
  name: string,
  findings: string[],
  what: string,
): { ok: false; problem: string; findings: string[] } {
  return {
    ok: false,
    problem: `${name} ${what}: a learned skill may only instruct the agent, and this one ${findings.length === 1 ? 'has a finding' : 'has findings'} like a risky AgentSkills import:\n${findings.map((finding) => `- ${finding}`).join('\n')}\nRemove that from the page; do not work around the check.`,
    findings,
  };
}

export function taken(name: string): string {
  // Names are shared by every user of the install: say the name is taken, never whose it is.
  return `The name ${name} is already taken on this Steward (skill names are shared by all its users): choose another --name.`;
}

export function unknownSkill(name: string): string {
  return `Unknown skill "${name}". Use get_skill to list domains, or get_skill --search "words".`;
}
