import type { ResolvedConfig } from '../config/index.ts';
import { modelFor } from '../config/index.ts';
import { ElevenLabsClient } from './elevenlabs.ts';

/** `note`: worth knowing, not a failure (the cause is reported by its own check). */
export type VoiceCheck = { name: string; ok: boolean; note?: boolean; detail: string; fix?: string };

/**
 * `steward doctor`'s voice lines: which model transcribes voice notes (and in which format), and
 * whether ElevenLabs accepts the key and voice (off when unset: replies stay text).
 */
export async function voiceChecks(config: ResolvedConfig, fetchImpl?: typeof fetch): Promise<VoiceCheck[]> {
  const checks: VoiceCheck[] = [];
  const role = config.roster.roles.transcription;
  if (config.endpoint.provider === 'none' || !role) {
    checks.push({
      name: 'voice transcription',
      // The llm check already fails for a missing endpoint: one cause, one FAIL.
      ok: true,
      note: true,
      detail: 'no LLM endpoint: voice notes are answered with a note asking to write',
      fix: 'configure an LLM (OPENROUTER_API_KEY, or LLM_BASE_URL + LLM_MODEL); llm.roles.transcription picks a model that takes audio',
    });
  } else {
    const formats = modelFor(config.roster, role.model).audio_formats;
    const how =
      !formats || formats.includes('ogg') ? 'voice notes sent as Ogg' : 'voice notes decoded to WAV';
    checks.push({ name: 'voice transcription', ok: true, detail: `model ${role.model}, ${how}` });
  }
  const { api_key, voice_id, api_url } = config.voice.elevenlabs;
  if (!api_key && !voice_id) {
    checks.push({
      name: 'voice replies',
      ok: true,
      detail: 'off: replies are text (set ELEVENLABS_API_KEY and ELEVENLABS_VOICE_ID for spoken replies)',
    });
    return checks;
  }
  if (!api_key || !voice_id) {
    checks.push({
      name: 'voice replies',
      ok: false,
      detail: `off: ${api_key ? 'ELEVENLABS_VOICE_ID' : 'ELEVENLABS_API_KEY'} is missing`,
      fix: 'set both ELEVENLABS_API_KEY and ELEVENLABS_VOICE_ID (a voice id from the ElevenLabs voice library)',
    });
    return checks;
  }
  const client = new ElevenLabsClient({
    apiKey: api_key,
    voiceId: voice_id,
    apiUrl: api_url,
    modelId: config.voice.elevenlabs.model_id,
    timeoutMs: 5_000,
    retryDelayMs: 0,
    fetch: fetchImpl,
  });
  const answer = await client.check();
  if (answer.ok) {
    checks.push({
      name: 'voice replies',
      ok: true,
      detail: `ElevenLabs at ${api_url} answers; voice ${voice_id}${answer.name ? ` (${answer.name})` : ''}`,
    });
  } else {
    checks.push({
      name: 'voice replies',
      ok: false,
      detail: `ElevenLabs at ${api_url}: ${answer.error}; replies fall back to text`,
      fix:
        answer.status === 401 || answer.status === 403
          ? 'the key was refused: check ELEVENLABS_API_KEY'
          : answer.status === 404 || answer.status === 400
            ? 'no such voice: check ELEVENLABS_VOICE_ID'
            : 'check ELEVENLABS_API_URL and that ElevenLabs is reachable from here',
    });
  }
  return checks;
}
