import { Hono } from 'hono';
import { type ConverseDeps, converse, type TurnOutcome, turnOutcome } from '../agents/index.ts';
import type { ResolvedConfig } from '../config/index.ts';
import { userIdProblem } from '../users/index.ts';
import { NOTHING_HEARD, VOICE_UNAVAILABLE, type VoiceService } from '../voice/index.ts';
import { type AuthEnv, actingUser } from './auth.ts';
import { badRequest, refusalResponse, textProblem } from './input.ts';

/** The route the API's JSON-only rule skips: it takes audio, up to voice.max_bytes (its own body limit). */
export const VOICE_UPLOAD_PATH = '/api/voice';

const STATUS_OF_PROBLEM: Record<string, 400 | 413 | 415 | 502 | 503> = {
  empty: 400,
  corrupt: 400,
  unsupported: 415,
  too_long: 413,
  too_big: 413,
  transcription_failed: 502,
  not_configured: 503,
};

type Upload = {
  audio: Uint8Array;
  mimeType: string | null;
  fields: { user?: string; conversation?: string; new?: boolean };
};

/** Reads the audio: a multipart form's file part (`audio`, `file` or the first file), or the raw body. */
async function readUpload(
  request: Request,
  maxBytes: number,
): Promise<Upload | { status: 400 | 413 | 415; message: string }> {
  const type = (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  // The edge already stopped the body at voice.max_bytes plus 64 KB (a form's wrapping).
  const tooBig = {
    status: 413 as const,
    message: `The audio is over the limit of ${maxBytes} bytes (voice.max_bytes). Send a shorter recording.`,
  };
  const url = new URL(request.url);
  if (type === 'multipart/form-data') {
    let form: FormData;
    try {
      form = await request.formData();
    } catch {
      return {
        status: 400,
        message: 'The multipart body could not be read. Send the audio as a file part named "audio".',
      };
    }
    const file =
      [form.get('audio'), form.get('file'), ...form.values()].find(
        (value): value is File => value instanceof File,
      ) ?? null;
    if (!file)
      return { status: 400, message: 'No file in the form: send the audio as a file part named "audio".' };
    if (file.size > maxBytes) return tooBig;
    const text = (name: string) => {
      const value = form.get(name);
      return typeof value === 'string' && value ? value : undefined;
    };
    return {
      audio: new Uint8Array(await file.arrayBuffer()),
      mimeType: file.type || null,
      fields: { user: text('user'), conversation: text('conversation'), new: text('new') === 'true' },
    };
  }
  if (type.startsWith('audio/') || type === 'application/octet-stream' || type === 'video/webm') {
    const audio = new Uint8Array(await request.arrayBuffer());
    if (audio.length > maxBytes) return tooBig;
    const query = (name: string) => url.searchParams.get(name) || undefined;
    return {
      audio,
      mimeType: type,
      fields: { user: query('user'), conversation: query('conversation'), new: query('new') === 'true' },
    };
  }
  return {
    status: 415,
    message: `Send the audio as multipart/form-data (a file part named "audio") or as the raw body with its audio/* Content-Type (got ${type || 'none'}).`,
  };
}

/**
 * `POST /api/voice` (audio) → `{transcript, reply, audio_url}`: the speech is transcribed, run
 * as a voice turn, and the answer spoken as MP3 at `audio_url` — served once, to the same user
 * (or the owner), within 10 minutes, behind the API token. When speech fails `audio_url` is null
 * and the reply carries a notice.
 */
export function voiceRoutes(
  deps: ConverseDeps & {
    voice: VoiceService;
    config: () => ResolvedConfig;
  },
): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();
  app.post('/voice', async (c) => {
    const config = deps.config();
    const upload = await readUpload(c.req.raw, config.voice.max_bytes);
    if ('status' in upload) {
      const error =
        upload.status === 413
          ? 'payload_too_large'
          : upload.status === 415
            ? 'unsupported_media_type'
            : 'bad_request';
      return c.json({ error, message: upload.message }, upload.status);
    }
    const acting = actingUser(c, upload.fields.user);
    if ('response' in acting) return acting.response;
    const { userId } = acting;
    const problem =
      userIdProblem(userId) ??
      (upload.fields.conversation ? textProblem('conversation', upload.fields.conversation) : null);
    if (problem) return badRequest(c, problem);
    // Counted before the costly transcription; the turn below is then already admitted.
    try {
      await deps.rateLimit?.check({ userId });
    } catch (error) {
      return refusalResponse(c, error);
    }
    const heard = await deps.voice.transcribe(upload.audio, {
      userId,
      mimeType: upload.mimeType,
      signal: c.req.raw.signal,
    });
    if (!heard.ok) {
      if (heard.code === 'nothing_heard') {
        return c.json({ transcript: '', reply: NOTHING_HEARD, audio_url: null });
      }
      return c.json({ error: heard.code, message: heard.reply }, STATUS_OF_PROBLEM[heard.code] ?? 400);
    }
    let outcome: TurnOutcome;
    try {
      outcome = await turnOutcome(
        await converse(deps, {
          userId,
          surface: 'voice',
          text: heard.transcript,
          options: {
            conversationId: upload.fields.conversation,
            newConversation: upload.fields.new,
            voice: true,
            signal: c.req.raw.signal,
            admitted: true,
          },
        }),
      );
    } catch (error) {
      return refusalResponse(c, error, { transcript: heard.transcript });
    }
    let reply = outcome.reply;
    let audioUrl: string | null = null;
    let notice: string | null = null;
    if (reply && (await deps.voice.wantsVoice(userId, true))) {
      const speech = await deps.voice.speak(reply, 'mp3_44100_128');
      if (speech.ok) {
        const id = await deps.voice.storeClip(userId, speech.audio, speech.contentType);
        const base = (config.public_url ?? new URL(c.req.url).origin).replace(/\/+$/, '');
        audioUrl = `${base}/api/voice/audio/${id}`;
      } else {
        notice = VOICE_UNAVAILABLE;
        reply = `${reply}\n\n${VOICE_UNAVAILABLE}`;
      }
    }
    return c.json({
      transcript: heard.transcript,
      reply,
      audio_url: audioUrl,
      ...(notice ? { notice } : {}),
      conversationId: outcome.conversationId,
      turnId: outcome.turnId,
      status: outcome.status,
    });
  });
  app.get('/voice/audio/:id', async (c) => {
    const principal = c.get('principal');
    const clip = await deps.voice.takeClip(c.req.param('id'), principal.owner ? null : principal.userId);
    if (!clip) {
      return c.json(
        {
          error: 'not_found',
          message:
            'No such audio: it was already fetched, it expired (10 minutes), or it belongs to another user.',
        },
        404,
      );
    }
    return c.body(clip.audio as Uint8Array<ArrayBuffer>, 200, {
      'content-type': clip.contentType,
      'cache-control': 'no-store',
    });
  });
  return app;
}
