import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Hono } from 'hono';
import { beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../src/logging/logger.ts';
import { type AuthEnv, createServerApp, runRoutes } from '../src/server/index.ts';
import { createApiToken, ensureUser } from '../src/users/index.ts';
import {
  approve,
  callTool,
  dispatch,
  getResults,
  lastToolResult,
  messageText,
  reply,
  run,
  scriptModels,
} from './support/agent-scripts.ts';
import { backends } from './support/db.ts';
import { useFakeLlm } from './support/fake-llm.ts';
import { cliTurns, ROLE_MODELS, runAsCli, useTestSteward } from './support/steward.ts';

/*
 * One user's workflow is invisible to every other user: not in get_skill, listings, search,
 * suggestions, the prompt, dispatch, execution, the API or scheduled runs — it reads exactly
 * like a skill that does not exist. Its owner still sees and runs it.
 */

const WORKFLOW = 'workflows.morning_plan';
const DESCRIPTION = 'Secret launch checklist';
const BUILD =
  'workflow.build --name morning_plan --description "Secret launch checklist" --steps "Use tasks.search to list open tasks" --schedule "0 9 * * *" --timezone UTC';

const fake = useFakeLlm();

for (const backend of backends()) {
  describe(`workflow privacy [${backend}]`, () => {
    const steward = useTestSteward(backend, fake, { startTimeoutMs: 180_000 });
    let workflowFile: string;
    beforeAll(() => {
      workflowFile = path.join(steward.config.skillsDir, 'workflows', 'morning_plan.md');
    });

    const say = cliTurns(steward);
    const exec = (userId: string, command: string) => runAsCli(steward.runtime, userId, command);
    /** What telling apart "exists but not yours" from "does not exist" would need: never there. */
    const expectNoTrace = (text: string) => {
      expect(text).not.toContain('morning_plan');
      expect(text).not.toContain(DESCRIPTION);
      expect(text).not.toContain('alice');
    };

    it('alice builds a workflow through a full turn; it is written as hers', async () => {
      const models = scriptModels(fake, {
        orchestrator: [
          dispatch({
            agent_id: 'builder',
            mission: 'Build the morning plan workflow',
            skills: ['workflow.build'],
          }),
          getResults(),
          reply('Your morning plan runs at 09:00.'),
        ],
        agents: { builder: [run(BUILD), reply('Saved workflows.morning_plan.')] },
        sentinel: [approve()],
      });
      const outcome = await say('alice', 'Every morning at 9, list my open tasks');
      models.assertDone();
      expect(outcome.status).toBe('completed');
      // The receipt names the workflow and its schedule, never the server's path.
      expect(outcome.reply).toMatch(
        /^Your morning plan runs at 09:00\.\n\n✓ workflow\.build — workflows\.morning_plan \("[^"]+" in [^)]+\)$/,
      );
      expect(outcome.reply).not.toContain('/');
      expect(readFileSync(workflowFile, 'utf8')).toContain('owner: alice');
      steward.runtime.skills.load();
    });

    it('bob cannot find it: get_skill, the domain page, search and suggestions read as if it did not exist', async () => {
      const page = await exec('bob', `get_skill ${WORKFLOW}`);
      expect(page.status).toBe('error');
      expect(page.content).toContain(`Unknown skill "${WORKFLOW}"`);
      expectNoTrace(page.content.replace(`"${WORKFLOW}"`, ''));
      const domain = await exec('bob', 'get_skill workflows');
      expect(domain.status).toBe('ok');
      expect(domain.content).toContain('workflows.daily_digest');
      expectNoTrace(domain.content);
      expectNoTrace((await exec('bob', 'get_skill workflows.all')).content);
      expectNoTrace((await exec('bob', 'get_skill --search "secret launch checklist morning plan"')).content);
      // Skill pages are also searchable as content, in an index every user shares.
      const content = await exec('bob', 'files.search --query "secret launch checklist" --scope skills');
      expect(content.status).toBe('ok');
      expectNoTrace(content.content);
      const typo = await exec('bob', 'workflows.morning_pla');
      expect(typo.content).toContain('Unknown skill "workflows.morning_pla"');
      expect(typo.content).not.toContain(WORKFLOW);
      const direct = await exec('bob', WORKFLOW);
      expect(direct).toMatchObject({ status: 'error' });
      expect(direct.content).toContain(`Unknown skill "${WORKFLOW}"`);
      expectNoTrace(direct.content.replace(`"${WORKFLOW}"`, ''));
      expect(direct.content).not.toMatch(/forbidden|another user|not yours/i);
      // The HTTP API runs commands as the token's user.
      await ensureUser(steward.db.database, 'bob');
      const token = (await createApiToken(steward.db.database, 'bob')).token;
      const api = new Hono<AuthEnv>();
      api.route('/', runRoutes(steward.runtime));
      const app = createServerApp({
        database: steward.db.database,
        logger: silentLogger(),
        config: () => steward.config,
        api,
      });
      for (const command of [`get_skill ${WORKFLOW}`, WORKFLOW]) {
        const response = await app.request('http://localhost/api/run', {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ command }),
        });
        const body = (await response.json()) as { status: string; content: string };
        expect(body.status, command).toBe('error');
        expect(body.content, command).toContain(`Unknown skill "${WORKFLOW}"`);
      }
    });

    it('bob’s turn shows no trace of it in the prompt, get_skill, run or dispatch', async () => {
      const models = scriptModels(fake, {
        orchestrator: [
          callTool('get_skill', { path: 'workflows' }),
          callTool('get_skill', { search: 'secret launch checklist' }),
          run(WORKFLOW),
          dispatch({ agent_id: 'runner', mission: 'Run the morning plan', skills: [WORKFLOW] }),
          reply('I found no such workflow.'),
        ],
      });
      const outcome = await say('bob', 'Run the morning plan workflow');
      models.assertDone();
      expect(outcome.reply).toBe('I found no such workflow.');
      const requests = models.orchestratorRequests();
      const prompt = (requests[0]!.body.messages ?? [])
        .map((message) => messageText(message.content))
        .join('\n');
      expectNoTrace(prompt);
      expect(JSON.stringify(requests[0]!.body.tools)).not.toContain('morning_plan');
      expectNoTrace(lastToolResult(requests[1]!));
      expectNoTrace(lastToolResult(requests[2]!));
      expect(lastToolResult(requests[3]!)).toContain(`Unknown skill "${WORKFLOW}"`);
      expect(lastToolResult(requests[4]!)).toContain('Not dispatched');
      expect(lastToolResult(requests[4]!)).toContain(WORKFLOW);
      expect(models.agentRequests()).toHaveLength(0);
    });

    it('alice still sees and runs it', async () => {
      const page = await exec('alice', `get_skill ${WORKFLOW}`);
      expect(page.status).toBe('ok');
      expect(page.content).toContain(DESCRIPTION);
      expect((await exec('alice', 'get_skill workflows')).content).toContain(WORKFLOW);
      expect((await exec('alice', 'get_skill --search "secret launch"')).content).toContain(WORKFLOW);
      const ran = await exec('alice', WORKFLOW);
      expect(ran.status).toBe('ok');
      expect(ran.content).toContain('Use tasks.search to list open tasks');
    });

    it('bob building the same name is refused without touching or revealing alice’s file', async () => {
      const before = readFileSync(workflowFile, 'utf8');
      const same = await exec(
        'bob',
        'workflow.build --name morning_plan --description "Bob plan" --steps "Use tasks.search to list tasks"',
      );
      expect(same.status).toBe('error');
      expect(same.content).toContain(`The name ${WORKFLOW} is already taken`);
      expect(same.content).toContain('choose another --name');
      expect(same.content).not.toContain(DESCRIPTION);
      expect(same.content).not.toContain('alice');
      // Steps cannot call it either: to bob it is an unknown skill.
      const calling = await exec(
        'bob',
        `workflow.build --name bob_plan --description "Bob plan" --steps "Run ${WORKFLOW}"`,
      );
      expect(calling.status).toBe('error');
      expect(calling.content).toContain(`unknown skill "${WORKFLOW}"`);
      expect(readFileSync(workflowFile, 'utf8')).toBe(before);
    });

    it('runs only as its owner: the schedule is alice’s, and a run for bob finds nothing', async () => {
      await steward.runtime.workflows.sync(steward.runtime.skills.snapshot());
      expect(await steward.runtime.workflows.list('bob')).toEqual([]);
      expect((await steward.runtime.workflows.list()).filter((row) => row.skill === WORKFLOW)).toEqual([
        expect.objectContaining({ user: 'alice' }),
      ]);
      const forBob = await steward.runtime.workflows.runNow(WORKFLOW, 'bob');
      expect(forBob).toEqual({ problem: expect.stringContaining('No workflow') });
      fake.respondWith((request) => {
        if (request.body.model !== ROLE_MODELS.sub_agent) throw new Error(`unexpected ${request.body.model}`);
        return { text: 'Plan: nothing open.' };
      });
      const asOwner = await steward.runtime.workflows.runNow(WORKFLOW);
      fake.respondWith(null);
      expect(asOwner).toEqual({ run: expect.objectContaining({ userId: 'alice', status: 'ok' }) });
      const turns = await steward.db.database.query<{ user_id: string }>(
        'SELECT user_id FROM turns WHERE id = $1',
        ['run' in asOwner ? asOwner.run.turnId : ''],
      );
      expect(turns).toEqual([{ user_id: 'alice' }]);
    });
  });
}
