import type { Queryable } from '../../src/db/index.ts';
import { recordSkillCall, type SkillCallEnd } from '../../src/skills/executions.ts';

/**
 * Records one finished skill call typed on its own (no agent, no conversation; the command is the
 * skill's name), taking a millisecond: what usage statistics and skill reviews count.
 */
export function recordFinishedSkillCall(
  db: Queryable,
  call: {
    id: string;
    userId: string;
    skill: string;
    turnId?: string | null;
    at: Date;
    status: SkillCallEnd['status'];
  },
): Promise<void> {
  return recordSkillCall(
    db,
    {
      id: call.id,
      parentId: null,
      turnId: call.turnId ?? null,
      userId: call.userId,
      conversationId: null,
      agentId: null,
      mission: null,
      skill: call.skill,
      command: call.skill,
      flags: {},
      receipt: null,
    },
    call.at,
    { status: call.status, result: null, error: null, durationMs: 1 },
  );
}
