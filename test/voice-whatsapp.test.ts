import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { fixture } from './support/channel-fixtures.ts';
import { type ChannelSteward, startChannelSteward } from './support/channels.ts';
import { backends } from './support/db.ts';
import {
  FAKE_ELEVENLABS_KEY,
  FAKE_VOICE_ID,
  type FakeElevenLabs,
  startFakeElevenLabs,
} from './support/fake-elevenlabs.ts';
import {
  FAKE_PHONE_NUMBER_ID,
  FAKE_WHATSAPP_TOKEN,
  type FakeGraph,
  startFakeGraph,
} from './support/fake-graph.ts';
import { type FakeLlm, startFakeLlm } from './support/fake-llm.ts';
import { audioPartOf, SPOKEN_WORDS, VOICE_NOTE_OGG } from './support/voice.ts';

// Each test waits for real HTTP round trips through a loaded machine.
vi.setConfig({ testTimeout: 60_000 });

const APP_SECRET = 'whatsapp-app-secret-0123';
const VERIFY_TOKEN = 'whatsapp-verify-token-0123';
const SENDER = '16505551234';
const ANSWER = 'Done: I will remind you to call Ana tomorrow at nine.';

const signature = (body: string) => `sha256=${createHmac('sha256', APP_SECRET).update(body).digest('hex')}`;

for (const backend of backends()) {
  describe(`WhatsApp voice notes [${backend}]`, () => {
    let llm: FakeLlm;
    let graph: FakeGraph;
    let elevenlabs: FakeElevenLabs;
    let steward: ChannelSteward;
    let seq = 1;
    const sendVoiceNote = async (audio: Uint8Array) => {
      const mediaId = graph.addMedia(audio);
      const payload = fixture<{
        entry: Array<{
          changes: Array<{ value: { messages: Array<{ id: string; audio: { id: string } }> } }>;
        }>;
      }>('whatsapp', 'voice-message');
      const message = payload.entry[0]!.changes[0]!.value.messages[0]!;
      message.id = `wamid.voice.${seq++}`;
      message.audio.id = mediaId;
      const body = JSON.stringify(payload);
      const response = await steward.post('/webhooks/whatsapp', body, {
        'x-hub-signature-256': signature(body),
      });
      expect(response.status).toBe(200);
      return { mediaId, messageId: message.id };
    };

    beforeAll(async () => {
      llm = await startFakeLlm();
      graph = await startFakeGraph();
      elevenlabs = await startFakeElevenLabs();
      steward = await startChannelSteward(
        backend,
        llm,
        `channels:
  allow: ["whatsapp:${SENDER}"]
  whatsapp:
    access_token: "${FAKE_WHATSAPP_TOKEN}"
    app_secret: "${APP_SECRET}"
    verify_token: "${VERIFY_TOKEN}"
    phone_number_id: "${FAKE_PHONE_NUMBER_ID}"
    graph_url: "${graph.graphUrl}"
voice:
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
      await graph?.close();
      await llm?.close();
    });

    it('downloads the voice note, transcribes it, runs a single_loop turn and answers with an audio message', async () => {
      const before = llm.chatRequests.length;
      llm.enqueue({ text: SPOKEN_WORDS }, { text: ANSWER });
      const { mediaId, messageId } = await sendVoiceNote(VOICE_NOTE_OGG);
      await expect.poll(() => graph.audioSent.length, { timeout: 30_000 }).toBe(1);
      expect(graph.downloads).toContain(mediaId);
      expect(audioPartOf(llm.chatRequests[before]!)).toEqual({
        data: VOICE_NOTE_OGG.toString('base64'),
        format: 'ogg',
      });
      expect(JSON.stringify(llm.chatRequests[before + 1]!.body.messages)).toContain(SPOKEN_WORDS);
      expect(
        await steward.count(
          "SELECT count(*) FROM turns WHERE channel_message_id = $1 AND mode = 'single_loop'",
          [messageId],
        ),
      ).toBe(1);
      expect(elevenlabs.speech.at(-1)).toMatchObject({ outputFormat: 'opus_48000_64', text: ANSWER });
      const upload = graph.uploads.at(-1)!;
      expect(upload.type).toBe('audio/ogg');
      expect(upload.audio.subarray(0, 4).toString('latin1')).toBe('OggS');
      expect(graph.audioSent.at(-1)).toMatchObject({ to: SENDER, mediaId: upload.id });
      expect(graph.sent).toHaveLength(0);
      llm.assertDone();
    });

    it('with ElevenLabs failing twice, answers in text with a notice about voice', async () => {
      const before = { speech: elevenlabs.speech.length, audio: graph.audioSent.length };
      llm.enqueue({ text: SPOKEN_WORDS }, { text: ANSWER });
      elevenlabs.failNext({ status: 500, json: {} }, { status: 500, json: {} });
      await sendVoiceNote(VOICE_NOTE_OGG);
      await expect.poll(() => graph.sent.length, { timeout: 30_000 }).toBe(1);
      expect(elevenlabs.speech.length).toBe(before.speech + 2);
      expect(graph.sent[0]!.body).toContain(ANSWER);
      expect(graph.sent[0]!.body.toLowerCase()).toContain('voice');
      expect(graph.audioSent.length).toBe(before.audio);
      llm.assertDone();
    });

    it('sends the text when WhatsApp refuses the audio upload', async () => {
      llm.enqueue({ text: SPOKEN_WORDS }, { text: ANSWER });
      graph.failNext({
        status: 400,
        json: { error: { message: '(#131053) Media upload error', type: 'OAuthException', code: 131053 } },
      });
      const sent = graph.sent.length;
      await sendVoiceNote(VOICE_NOTE_OGG);
      await expect.poll(() => graph.sent.length, { timeout: 30_000 }).toBe(sent + 1);
      expect(graph.sent.at(-1)!.body).toContain(ANSWER);
      llm.assertDone();
    });
  });
}
