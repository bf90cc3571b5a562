import { errorMessage } from '../errors.ts';

/** ElevenLabs output formats Steward asks for: Ogg/Opus voice notes for chat apps, MP3 for the web. */
export type SpeechFormat = 'opus_48000_64' | 'mp3_44100_128';

export const SPEECH_CONTENT_TYPES: Record<SpeechFormat, string> = {
  opus_48000_64: 'audio/ogg',
  mp3_44100_128: 'audio/mpeg',
};

export type ElevenLabsOptions = {
  apiKey: string;
  voiceId: string;
  apiUrl: string;
  modelId: string;
  timeoutMs: number;
  /** Wait before the second attempt. */
  retryDelayMs: number;
  fetch?: typeof fetch;
  sleep?: (ms: number) => Promise<void>;
};

export type SpeechResult =
  | { ok: true; audio: Uint8Array; contentType: string; attempts: number }
  | { ok: false; error: string; attempts: number };

const ATTEMPTS = 2;

/** An error body in a few words: an HTML page (a gateway's, during an outage) by its title. */
function bodyDetail(body: string): string {
  const title = /<title[^>]*>([^<]{1,120})<\/title>/i.exec(body)?.[1]?.trim();
  if (title) return title;
  return body.replace(/\s+/g, ' ').trim().slice(0, 200);
}

/**
 * Text to speech over ElevenLabs' REST API (`POST {url}/v1/text-to-speech/{voice_id}` with
 * `output_format` in the query), called with fetch so no SDK retries behind Steward's back:
 * two attempts in all, the second after a backoff — for no answer, 429 and 5xx (HTML pages
 * included); a refusal (other 4xx) is not tried again. Never throws: a failure is a value, and
 * the caller answers in text. Errors never carry the API key.
 */
export class ElevenLabsClient {
  readonly #options: ElevenLabsOptions;
  readonly #fetch: typeof fetch;
  readonly #sleep: (ms: number) => Promise<void>;

  constructor(options: ElevenLabsOptions) {
    this.#options = options;
    this.#fetch = options.fetch ?? globalThis.fetch;
    this.#sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  get voiceId(): string {
    return this.#options.voiceId;
  }

  async speak(text: string, format: SpeechFormat, signal?: AbortSignal): Promise<SpeechResult> {
    let error = '';
    for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
      if (attempt > 1) await this.#sleep(this.#options.retryDelayMs * (0.8 + 0.4 * Math.random()));
      if (signal?.aborted) return { ok: false, error: 'cancelled', attempts: attempt - 1 };
      const result = await this.#attempt(text, format, signal);
      if ('audio' in result) return { ok: true, ...result, attempts: attempt };
      error = result.error;
      if (result.final) return { ok: false, error, attempts: attempt };
    }
    return { ok: false, error, attempts: ATTEMPTS };
  }

  async #attempt(
    text: string,
    format: SpeechFormat,
    signal: AbortSignal | undefined,
  ): Promise<{ audio: Uint8Array; contentType: string } | { error: string; final?: boolean }> {
    const { apiUrl, voiceId, apiKey, modelId, timeoutMs } = this.#options;
    const url = `${apiUrl.replace(/\/+$/, '')}/v1/text-to-speech/${encodeURIComponent(voiceId)}?output_format=${format}`;
    const timeout = AbortSignal.timeout(timeoutMs);
    try {
      const response = await this.#fetch(url, {
        method: 'POST',
        headers: { 'xi-api-key': apiKey, 'content-type': 'application/json', accept: 'audio/*' },
        body: JSON.stringify({ text, model_id: modelId }),
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
      if (!response.ok) {
        const detail = bodyDetail(await response.text().catch(() => '')).replaceAll(apiKey, '***');
        return {
          error: `ElevenLabs answered HTTP ${response.status}${detail ? `: ${detail}` : ''}`,
          // A refusal (a bad key, a text it will not take) is refused again; throttling and outages pass.
          final: response.status !== 429 && response.status < 500,
        };
      }
      const audio = new Uint8Array(await response.arrayBuffer());
      if (audio.length === 0) return { error: 'ElevenLabs answered with no audio' };
      return { audio, contentType: SPEECH_CONTENT_TYPES[format] };
    } catch (error) {
      return {
        error: timeout.aborted
          ? `ElevenLabs did not answer within ${timeoutMs} ms`
          : `ElevenLabs is unreachable: ${errorMessage(error).replaceAll(apiKey, '***')}`,
      };
    }
  }

  /** For `steward doctor`: whether the key and voice are accepted (`GET /v1/voices/{voice_id}`). */
  async check(): Promise<{ ok: true; name: string | null } | { ok: false; error: string; status?: number }> {
    const { apiUrl, voiceId, apiKey } = this.#options;
    try {
      const response = await this.#fetch(
        `${apiUrl.replace(/\/+$/, '')}/v1/voices/${encodeURIComponent(voiceId)}`,
        { headers: { 'xi-api-key': apiKey }, signal: AbortSignal.timeout(5_000) },
      );
      if (!response.ok) return { ok: false, status: response.status, error: `HTTP ${response.status}` };
      const body = (await response.json().catch(() => null)) as { name?: string } | null;
      return { ok: true, name: body?.name ?? null };
    } catch (error) {
      return { ok: false, error: errorMessage(error).replaceAll(apiKey, '***') };
    }
  }
}
