import type { LlmClient } from '../llm/index.ts';
import type { AudioFormat } from './audio-format.ts';

const TRANSCRIBE_PROMPT =
  'You transcribe voice notes. Reply with exactly the words spoken, in the language spoken, with punctuation, and nothing else: no quotes, no comments, no translation. If nothing is said, reply with nothing at all.';

/** What models say instead of nothing when there is no speech. */
const NO_SPEECH =
  /^[\s"'([<*_-]*(no (speech|audio|words)( detected)?|silence|inaudible|nothing( was said)?|blank( audio)?|empty( audio)?|music)[\s.!"')\]>*_-]*$/i;

/**
 * Speech to text on the `transcription` role: the audio goes as an `input_audio` content part
 * of a chat-completions request. Returns the transcript, '' when nothing was said. Throws
 * LlmError when the model cannot be reached (after its retries and fallbacks).
 */
export async function transcribe(
  llm: LlmClient,
  audio: { data: Uint8Array; format: AudioFormat },
  options: { userId?: string | null; signal?: AbortSignal } = {},
): Promise<string> {
  const response = await llm.chat({
    role: 'transcription',
    messages: [
      { role: 'system', content: TRANSCRIBE_PROMPT },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Transcribe this voice note.' },
          {
            type: 'input_audio',
            input_audio: { data: Buffer.from(audio.data).toString('base64'), format: audio.format },
          },
        ],
      },
    ],
    temperature: 0,
    signal: options.signal,
    context: { userId: options.userId ?? null },
  });
  const text = response.text.trim();
  return NO_SPEECH.test(text) ? '' : text;
}
