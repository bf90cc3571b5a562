import os from 'node:os';
import { TelegramAdapter } from '../src/channels/telegram/telegram-adapter.ts';
import { loadConfig } from '../src/config/index.ts';
import type { Database } from '../src/db/index.ts';
import { createLlmClient } from '../src/llm/index.ts';
import { silentLogger } from '../src/logging/logger.ts';
import { decodeOggOpus, encodeWav, VoiceService } from '../src/voice/index.ts';
import { FAKE_ELEVENLABS_KEY, FAKE_VOICE_ID, startFakeElevenLabs } from '../test/support/fake-elevenlabs.ts';
import { startFakeHttp } from '../test/support/fake-http.ts';
import { FAKE_BOT_TOKEN, startFakeTelegram } from '../test/support/fake-telegram.ts';
import { VOICE_NOTE_OGG } from '../test/support/voice.ts';
import { type Bench, type BenchSection, ms, percentile } from './lib.ts';

const ROUND_TRIPS = 40;
const DECODES = 20;

type Stage = 'download' | 'decode' | 'transcribe' | 'speech' | 'upload' | 'total';
const STAGES: Stage[] = ['download', 'decode', 'transcribe', 'speech', 'upload', 'total'];

/**
 * One voice note's trip through Steward's own code against instant fakes on loopback (Telegram
 * getFile + download, the LLM, ElevenLabs, sendVoice): everything but the turn itself. `decode`
 * is 0 when the model takes Ogg as it is.
 */
async function roundTrips(audioFormats: string): Promise<Record<Stage, number[]>> {
  // An instant chat-completions answer (the strict fake LLM counts the audio's tokens: not instant).
  const llm = await startFakeHttp(() => ({
    status: 200,
    json: {
      id: 'chatcmpl-bench',
      object: 'chat.completion',
      created: 0,
      model: 'bench/model',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'Remind me to call Ana tomorrow at nine.' },
          finish_reason: 'stop',
        },
      ],
      usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 },
    },
  }));
  const telegram = await startFakeTelegram();
  const elevenlabs = await startFakeElevenLabs();
  const env = {
    LLM_BASE_URL: llm.url,
    LLM_API_KEY: 'bench-key-0123456789',
    LLM_MODEL: 'bench/model',
    ELEVENLABS_API_KEY: FAKE_ELEVENLABS_KEY,
    ELEVENLABS_VOICE_ID: FAKE_VOICE_ID,
    ELEVENLABS_API_URL: elevenlabs.url,
  };
  const base = loadConfig({ env, cwd: '/' });
  const config = audioFormats
    ? {
        ...base,
        roster: {
          ...base.roster,
          models: new Map([
            ...base.roster.models,
            [
              'bench/model',
              { ...base.roster.models.get('bench/model')!, audio_formats: ['wav', 'mp3'] as const },
            ],
          ]),
        },
      }
    : base;
  const voice = new VoiceService({
    database: null as unknown as Database, // transcribe and speak never touch it
    llm: createLlmClient(config),
    config: () => config as typeof base,
    logger: silentLogger(),
  });
  const adapter = new TelegramAdapter({
    botToken: FAKE_BOT_TOKEN,
    apiRoot: telegram.url,
    logger: silentLogger(),
  });
  const samples = Object.fromEntries(STAGES.map((stage) => [stage, [] as number[]])) as Record<
    Stage,
    number[]
  >;
  try {
    for (let index = 0; index < ROUND_TRIPS + 3; index++) {
      const fileId = telegram.addFile(VOICE_NOTE_OGG);
      const t0 = performance.now();
      const audio = await adapter.fetchMedia({ id: fileId }, AbortSignal.timeout(10_000));
      const t1 = performance.now();
      const heard = await voice.transcribe(audio, { userId: 'bench', mimeType: 'audio/ogg' });
      const t2 = performance.now();
      if (!heard.ok) throw new Error(heard.reply);
      const speech = await voice.speak(
        'Done: I will remind you to call Ana tomorrow at nine.',
        'opus_48000_64',
      );
      const t3 = performance.now();
      if (!speech.ok) throw new Error(speech.error);
      const sent = await adapter.send(
        {
          outboxId: index,
          inboundId: null,
          chatId: '1111',
          text: 'fallback',
          meta: {},
          audio: { data: speech.audio, contentType: speech.contentType },
        },
        AbortSignal.timeout(10_000),
      );
      const t4 = performance.now();
      if (sent.kind !== 'sent') throw new Error(`sendVoice: ${sent.kind}`);
      if (index < 3) continue; // warm-up (the WASM decoder's first load)
      samples.download.push(t1 - t0);
      samples.transcribe.push(t2 - t1);
      samples.speech.push(t3 - t2);
      samples.upload.push(t4 - t3);
      samples.total.push(t4 - t0);
    }
    // The decode share of transcribe, measured alone on the same note.
    if (audioFormats) {
      for (let index = 0; index < ROUND_TRIPS; index++) {
        const start = performance.now();
        encodeWav(await decodeOggOpus(VOICE_NOTE_OGG));
        samples.decode.push(performance.now() - start);
      }
    } else samples.decode.push(0);
  } finally {
    await Promise.all([llm.close(), telegram.close(), elevenlabs.close()]);
  }
  return samples;
}

/** Seconds of Ogg/Opus speech decoded (and converted to 16 kHz WAV) per second of wall time. */
async function decodeSpeed(): Promise<{ decodeOnly: number; withWav: number; audioSeconds: number }> {
  const first = await decodeOggOpus(VOICE_NOTE_OGG); // loads the WASM
  let start = performance.now();
  for (let index = 0; index < DECODES; index++) await decodeOggOpus(VOICE_NOTE_OGG);
  const decodeMs = performance.now() - start;
  start = performance.now();
  for (let index = 0; index < DECODES; index++) encodeWav(await decodeOggOpus(VOICE_NOTE_OGG));
  const withWavMs = performance.now() - start;
  const audioSeconds = first.seconds * DECODES;
  return {
    decodeOnly: audioSeconds / (decodeMs / 1000),
    withWav: audioSeconds / (withWavMs / 1000),
    audioSeconds: first.seconds,
  };
}

const bench: Bench = async () => {
  const rows: BenchSection['rows'] = [];
  for (const [label, formats] of [
    ['Ogg sent as is', ''],
    ['decoded to WAV (audio_formats: [wav, mp3])', 'wav'],
  ] as const) {
    const samples = await roundTrips(formats);
    for (const stage of STAGES) {
      if (stage === 'decode' && !formats) continue;
      rows.push([label, stage, ms(percentile(samples[stage], 50)), ms(percentile(samples[stage], 99))]);
    }
  }
  const speed = await decodeSpeed();
  const load = os.loadavg()[0]!.toFixed(1);
  return [
    {
      title: 'Voice: round trip overhead with instant fakes',
      description: `A ${speed.audioSeconds.toFixed(1)} s voice note (espeak-ng, Ogg/Opus) through Telegram getFile + download, the checks (and decoding), the transcription request, ElevenLabs and sendVoice, all against instant fakes on loopback; ${ROUND_TRIPS} trips after 3 warm-up, p50/p99 per stage. The turn itself is not included.`,
      columns: ['audio to the model', 'stage', 'p50', 'p99'],
      rows,
      notes: [`Load average while measuring: ${load} (other work competes for the two cores).`],
    },
    {
      title: 'Voice: Ogg/Opus decoding speed (ogg-opus-decoder, WASM)',
      description: `The same note decoded ${DECODES} times in-process; seconds of audio per second of wall time.`,
      columns: ['work', 'audio seconds per second'],
      rows: [
        ['decode to 48 kHz PCM', speed.decodeOnly.toFixed(0)],
        ['decode + 16 kHz WAV', speed.withWav.toFixed(0)],
      ],
    },
  ];
};

export default bench;
