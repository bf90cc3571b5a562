import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approve, dispatch, getResults, reply, run, scriptModels } from './support/agent-scripts.ts';
import { telegramText } from './support/channel-fixtures.ts';
import { type ChannelSteward, startChannelSteward } from './support/channels.ts';
import { backends } from './support/db.ts';
import { type FakeLlm, startFakeLlm } from './support/fake-llm.ts';
import { FAKE_BOT_TOKEN, type FakeTelegram, startFakeTelegram } from './support/fake-telegram.ts';

/*
 * Issue 21, item 2: receipts reach the chat as the user sees them. A Telegram turn that created
 * a task ends with its ✓ line, in Telegram's HTML with the detail shown as written; a reply
 * claiming an email that was never sent gets a ✗ line.
 */

const SECRET = 'tg-receipts-secret_0123';
const CHAT = 4242;

for (const backend of backends()) {
  describe(`receipts on Telegram [${backend}]`, () => {
    let llm: FakeLlm;
    let telegram: FakeTelegram;
    let steward: ChannelSteward;
    beforeAll(async () => {
      llm = await startFakeLlm();
      telegram = await startFakeTelegram();
      steward = await startChannelSteward(
        backend,
        llm,
        `channels:
  public_url: "http://127.0.0.1:9/"
  allow: ["telegram:${CHAT}"]
  telegram: { bot_token: "${FAKE_BOT_TOKEN}", webhook_secret: "${SECRET}", api_root: "${telegram.url}" }
`,
      );
    });
    afterAll(async () => {
      await steward?.close();
      await telegram?.close();
      await llm?.close();
    });

    const say = async (updateId: number, text: string) => {
      const before = telegram.sent.length;
      const response = await steward.post(
        '/webhooks/telegram',
        telegramText({ updateId, messageId: updateId, fromId: CHAT, text }),
        { 'x-telegram-bot-api-secret-token': SECRET },
      );
      expect(response.status).toBe(200);
      await expect.poll(() => telegram.sent.length, { timeout: 20_000 }).toBe(before + 1);
      return telegram.sent.at(-1)!;
    };

    it('ends the reply with the receipt of what was done, in Telegram HTML', async () => {
      const title = 'Plan <Q3> & *budget*';
      const models = scriptModels(llm, {
        orchestrator: [
          dispatch({ agent_id: 'maker', mission: `Create the task "${title}"`, skills: ['tasks.create'] }),
          getResults(),
          reply('Added it to your **list**.'),
        ],
        agents: { maker: [run(`tasks.create --title '${title}'`), reply('Created.')] },
        sentinel: [approve()],
      });

      const sent = await say(1, 'Add a task: plan Q3 budget');

      models.assertDone();
      expect(sent.parse_mode).toBe('HTML');
      expect(sent.text).toMatch(
        /^Added it to your <b>list<\/b>\.\n\n✓ tasks\.create — Plan &lt;Q3&gt; &amp; \*budget\* \(t_[a-z0-9]+\)$/,
      );
    });

    it('contradicts a reply that claims an email no call sent', async () => {
      const models = scriptModels(llm, { orchestrator: [reply("I've emailed Bob the agenda.")] });

      const sent = await say(2, 'Email Bob the agenda');

      models.assertDone();
      expect(sent.text).toBe("I've emailed Bob the agenda.\n\n✗ email.send — not run");
    });
  });
}
