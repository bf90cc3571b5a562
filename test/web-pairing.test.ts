import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pairingCodeFor } from '../src/channels/pairing.ts';
import { ensureUser, findIdentity } from '../src/users/index.ts';
import { backends } from './support/db.ts';
import { type FakeLlm, startFakeLlm } from './support/fake-llm.ts';
import { loginAs, OWNER_TOKEN, startWebSteward, type WebSteward } from './support/web.ts';

/* The dashboard's Approve button offers what `steward pairing approve --as` does. */

for (const backend of backends()) {
  describe(`dashboard pairing approval [${backend}]`, () => {
    let llm: FakeLlm;
    let steward: WebSteward;
    beforeAll(async () => {
      llm = await startFakeLlm();
      steward = await startWebSteward(backend, llm);
      await ensureUser(steward.runtime.database, 'alice');
    });
    afterAll(async () => {
      await steward?.stop();
      await llm?.close();
    });

    const codeFor = async (senderId: string) =>
      (
        await pairingCodeFor(
          steward.runtime.database,
          { channel: 'telegram', senderId, senderName: 'Me', chatId: senderId, meta: {} },
          new Date(),
        )
      ).request.code;

    it('offers a new user, the owner, or an existing user, and joins the sender to the one chosen', async () => {
      const code = await codeFor('4242');
      const owner = await loginAs(steward.url, OWNER_TOKEN);
      const page = await (await owner.get('/channels')).text();
      expect(page).toContain(`<option value="">a new user (telegram:4242)</option>`);
      expect(page).toContain('<option value="local">me, the owner');
      expect(page).toContain('<option value="alice">alice</option>');
      const approved = await owner.post('/channels/pairing/approve', { csrf: owner.csrf, code, as: 'local' });
      expect(approved.status).toBe(303);
      expect(decodeURIComponent(approved.headers.get('location') ?? '')).toContain(
        'Approved: telegram:4242 joined local and shares its memory, tasks and history.',
      );
      expect((await findIdentity(steward.runtime.database, 'telegram', '4242'))?.userId).toBe('local');

      const other = await codeFor('5151');
      const unknown = await owner.post('/channels/pairing/approve', {
        csrf: owner.csrf,
        code: other,
        as: 'nobody',
      });
      expect(decodeURIComponent(unknown.headers.get('location') ?? '')).toContain('No user "nobody"');
      expect(await findIdentity(steward.runtime.database, 'telegram', '5151')).toBeNull();
    });
  });
}
