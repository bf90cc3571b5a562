import { StewardError } from '../../errors.ts';
import { skillNameProblem } from './skill-name.ts';

/**
 * A valid page for `steward skills new DOMAIN.ACTION`, to be filled in. Throws for an invalid
 * name: callers check it first with `skillNameProblem`.
 */
export function skillPageSkeleton(name: string): string {
  const problem = skillNameProblem(name);
  if (problem) throw new StewardError('skill_name_invalid', problem);
  return `---
name: ${name}
description: Describe in one line what ${name} does
readonly: false # true only if it changes nothing: then the orchestrator may run it directly
---

# ${name}

Say what this skill does and when to use it.

## Usage

${name} --example <value>

## Flags

--example    Describe this flag (required)

## Behavior

Describe what the skill does step by step, its edge cases and limits.

## Examples

${name} --example "some value"
`;
}
