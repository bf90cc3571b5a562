import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SPOKEN_TURN_NOTE } from '../src/agents/index.ts';
import { setVoiceReplies } from '../src/users/index.ts';
import { type ChannelSteward, startChannelSteward } from './support/channels.ts';
import { backends } from './support/db.ts';
import {
  FAKE_ELEVENLABS_KEY,
  FAKE_VOICE_ID,
  type FakeElevenLabs,
  startFakeElevenLabs,
} from './support/fake-elevenlabs.ts';
import { type FakeLlm, startFakeLlm } from './support/fake-llm.ts';
import { FAKE_BOT_TOKEN, type FakeTelegram, startFakeTelegram } from './support/fake-telegram.ts';
import { audioPartOf, SPOKEN_WORDS, telegramVoice, VOICE_NOTE_OGG } from './support/voice.ts';

// Each test waits for real HTTP round trips through a loaded machine.
vi.setConfig({ testTimeout: 60_000 });

const SECRET = 'tg-webhook-secret_0123';
const OWNER = 1111;
const ANSWER = 'Done: I will remind you to call Ana tomorrow at nine.';

for (const backend of backends()) {
  describe(`Telegram voice notes [${backend}]`, () => {
    let llm: FakeLlm;
    let telegram: FakeTelegram;
    let elevenlabs: FakeElevenLabs;
    let steward: ChannelSteward;
    let nextId = 3000;
    const hook = (update: object) =>
      steward.post('/webhooks/telegram', update, { 'x-telegram-bot-api-secret-token': SECRET });
    const sendVoiceNote = async (
      audio: Uint8Array,
      options: { duration?: number; fileSize?: number } = {},
    ) => {
      const id = nextId++;
      const fileId = telegram.addFile(audio);
      const response = await hook(telegramVoice({ updateId: id, messageId: id, fileId, ...options }));
      expect(response.status).toBe(200);
      return { messageId: `${OWNER}:${id}`, fileId };
    };
    const replies = () => telegram.sent.length + telegram.voices.length;

    beforeAll(async () => {
      llm = await startFakeLlm();
      telegram = await startFakeTelegram();
      elevenlabs = await startFakeElevenLabs();
      steward = await startChannelSteward(
        backend,
        llm,
        `channels:
  public_url: "http://127.0.0.1:9/"
  allow: ["telegram:${OWNER}=local"]
  telegram: { bot_token: "${FAKE_BOT_TOKEN}", webhook_secret: "${SECRET}", api_root: "${telegram.url}" }
voice:
  max_seconds: 60
  elevenlabs:
    api_key: "${FAKE_ELEVENLABS_KEY}"
    voice_id: "${FAKE_VOICE_ID}"
    api_url: "${elevenlabs.url}"
    retry_delay_ms: 50
`,
      );
    });
    afterAll(async () => {
      await steward?.close();
      await elevenlabs?.close();
      await telegram?.close();
      await llm?.close();
    });

    it('transcribes a voice note, runs a single_loop turn on the transcript and answers with sendVoice', async () => {
      const before = { requests: llm.chatRequests.length, replies: replies() };
      llm.enqueue({ text: SPOKEN_WORDS }, { text: ANSWER });
      const { messageId, fileId } = await sendVoiceNote(VOICE_NOTE_OGG);
      await expect.poll(() => telegram.voices.length, { timeout: 30_000 }).toBe(1);
      expect(telegram.calls('getFile').at(-1)!.body).toMatchObject({ file_id: fileId });
      expect(telegram.downloads).toContain(fileId);
      const [transcription, turn] = llm.chatRequests.slice(before.requests);
      expect(audioPartOf(transcription!)).toEqual({
        data: VOICE_NOTE_OGG.toString('base64'),
        format: 'ogg',
      });
      const shown = JSON.stringify(turn!.body.messages);
      expect(shown).toContain(SPOKEN_WORDS);
      expect(shown).toContain(SPOKEN_TURN_NOTE);
      expect(
        await steward.count(
          "SELECT count(*) FROM turns WHERE channel_message_id = $1 AND mode = 'single_loop' AND status = 'completed'",
          [messageId],
        ),
      ).toBe(1);
      expect(
        await steward.count(
          'SELECT count(*) FROM inbound_messages WHERE channel_message_id = $1 AND transcript = $2',
          [messageId, SPOKEN_WORDS],
        ),
      ).toBe(1);
      expect(elevenlabs.speech.at(-1)).toMatchObject({
        voiceId: FAKE_VOICE_ID,
        outputFormat: 'opus_48000_64',
        text: ANSWER,
      });
      const voice = telegram.voices.at(-1)!;
      expect(voice.chat_id).toBe(String(OWNER));
      expect(voice.audio.subarray(0, 4).toString('latin1')).toBe('OggS');
      // A short answer is the audio alone.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(replies()).toBe(before.replies + 1);
      llm.assertDone();
    });

    it('shows the transcript on request with /transcript, without the model', async () => {
      const sent = telegram.sent.length;
      await hook({
        update_id: nextId,
        message: {
          message_id: nextId++,
          from: { id: OWNER, is_bot: false, first_name: 'Ada' },
          chat: { id: OWNER, type: 'private' },
          date: 1735690300,
          text: '/transcript',
          entities: [{ type: 'bot_command', offset: 0, length: 11 }],
        },
      });
      await expect.poll(() => telegram.sent.length, { timeout: 10_000 }).toBe(sent + 1);
      expect(telegram.sent.at(-1)!.text).toContain(SPOKEN_WORDS);
      llm.assertDone();
    });

    it('with ElevenLabs failing twice, answers in text with a notice about voice, once', async () => {
      const before = {
        speech: elevenlabs.speech.length,
        voices: telegram.voices.length,
        sent: telegram.sent.length,
      };
      llm.enqueue({ text: SPOKEN_WORDS }, { text: ANSWER });
      elevenlabs.failNext(
        { status: 500, json: { detail: 'busy' } },
        { status: 503, json: { detail: 'busy' } },
      );
      await sendVoiceNote(VOICE_NOTE_OGG);
      await expect.poll(() => telegram.sent.length, { timeout: 30_000 }).toBe(before.sent + 1);
      expect(elevenlabs.speech.length).toBe(before.speech + 2);
      const text = telegram.sent.at(-1)!.text;
      expect(text).toContain(ANSWER);
      expect(text.toLowerCase()).toContain('voice');
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(telegram.voices.length).toBe(before.voices);
      expect(telegram.sent.length).toBe(before.sent + 1);
      llm.assertDone();
    });

    it('sends the text when Telegram refuses the voice message (voice messages forbidden)', async () => {
      const before = { voices: telegram.voices.length, sent: telegram.sent.length };
      llm.enqueue({ text: SPOKEN_WORDS }, { text: ANSWER });
      telegram.failNext('sendVoice', {
        status: 400,
        json: { ok: false, error_code: 400, description: 'Bad Request: VOICE_MESSAGES_FORBIDDEN' },
      });
      await sendVoiceNote(VOICE_NOTE_OGG);
      await expect.poll(() => telegram.sent.length, { timeout: 30_000 }).toBe(before.sent + 1);
      expect(telegram.sent.at(-1)!.text).toContain(ANSWER);
      expect(telegram.voices.length).toBe(before.voices);
      llm.assertDone();
    });

    it('speaks a summary of a long answer and sends the full text too', async () => {
      const long = `${'Here is the plan for the week, step by step. '.repeat(20)}That is all.`;
      const before = { voices: telegram.voices.length, sent: telegram.sent.length };
      llm.enqueue({ text: SPOKEN_WORDS }, { text: long });
      await sendVoiceNote(VOICE_NOTE_OGG);
      await expect.poll(() => telegram.sent.length, { timeout: 30_000 }).toBe(before.sent + 1);
      expect(telegram.voices.length).toBe(before.voices + 1);
      expect(telegram.sent.at(-1)!.text).toContain('That is all.');
      const spoken = elevenlabs.speech.at(-1)!.text;
      expect(spoken.length).toBeLessThan(600);
      expect(spoken).toContain('full answer');
      llm.assertDone();
    });

    it('says "I could not hear anything" for an empty transcription, and runs no turn', async () => {
      const before = llm.chatRequests.length;
      const sent = telegram.sent.length;
      llm.enqueue({ text: '' });
      await sendVoiceNote(VOICE_NOTE_OGG);
      await expect.poll(() => telegram.sent.length, { timeout: 30_000 }).toBe(sent + 1);
      expect(telegram.sent.at(-1)!.text).toContain('could not hear anything');
      expect(llm.chatRequests.length).toBe(before + 1);
      llm.assertDone();
    });

    it('refuses too long, empty and damaged voice notes with the reason, calling no model', async () => {
      const before = { requests: llm.chatRequests.length, sent: telegram.sent.length };
      const tooLong = await sendVoiceNote(VOICE_NOTE_OGG, { duration: 61 });
      await sendVoiceNote(new Uint8Array(0));
      await sendVoiceNote(Buffer.from('OggS this is not really an ogg file at all, it is cut off'));
      await sendVoiceNote(Buffer.from('%PDF-1.7 not audio'));
      await expect.poll(() => telegram.sent.length, { timeout: 30_000 }).toBe(before.sent + 4);
      const texts = telegram.sent.slice(before.sent).map((message) => message.text);
      expect(texts[0]).toMatch(/1:01 long.*up to 1:00/);
      expect(texts[1]).toContain('empty');
      expect(texts[2]).toMatch(/damaged|cut off/);
      expect(texts[3]).toMatch(/damaged|cannot read audio/);
      // The long one was refused from Telegram's own duration, before downloading.
      expect(telegram.downloads).not.toContain(tooLong.fileId);
      expect(llm.chatRequests.length).toBe(before.requests);
      llm.assertDone();
    });

    it('answers voice with text for a user who asked for text, and text with voice for "always voice"', async () => {
      await setVoiceReplies(steward.runtime.database, 'local', 'text');
      const before = { voices: telegram.voices.length, sent: telegram.sent.length };
      llm.enqueue({ text: SPOKEN_WORDS }, { text: ANSWER });
      await sendVoiceNote(VOICE_NOTE_OGG);
      await expect.poll(() => telegram.sent.length, { timeout: 30_000 }).toBe(before.sent + 1);
      expect(telegram.sent.at(-1)!.text).toBe(ANSWER);
      await setVoiceReplies(steward.runtime.database, 'local', 'voice');
      llm.enqueue({ text: 'Nothing today.' });
      await hook({
        update_id: nextId,
        message: {
          message_id: nextId++,
          from: { id: OWNER, is_bot: false, first_name: 'Ada' },
          chat: { id: OWNER, type: 'private' },
          date: 1735690400,
          text: 'Anything on today?',
        },
      });
      await expect.poll(() => telegram.voices.length, { timeout: 30_000 }).toBe(before.voices + 1);
      expect(elevenlabs.speech.at(-1)!.text).toBe('Nothing today.');
      await setVoiceReplies(steward.runtime.database, 'local', 'auto');
      llm.assertDone();
    });
  });
}
