import { type FakeHttp, type FakeReply, startFakeHttp } from './fake-http.ts';

/*
 * A fake Meta Graph API for the WhatsApp Cloud API: POST /{version}/{phone_number_id}/messages
 * (text and audio), POST /{version}/{phone_number_id}/media (multipart uploads), GET
 * /{version}/{media_id} (a media URL) and the download at that URL (with the token).
 */

export const FAKE_WHATSAPP_TOKEN = 'EAAG-fake-whatsapp-token';
export const FAKE_PHONE_NUMBER_ID = '106540352242922';

export type WhatsAppSent = { to: string; body: string; id: string };
export type WhatsAppAudioSent = { to: string; mediaId: string; id: string };
export type WhatsAppUpload = { id: string; type: string; audio: Buffer; messagingProduct: string };

export type FakeGraph = FakeHttp & {
  /** The Graph URL to configure (with its version). */
  readonly graphUrl: string;
  readonly sent: WhatsAppSent[];
  readonly audioSent: WhatsAppAudioSent[];
  readonly uploads: WhatsAppUpload[];
  /** Media ids downloaded. */
  readonly downloads: string[];
  /** Makes media available (a voice note the user sent); returns its media id. */
  addMedia(bytes: Uint8Array, mimeType?: string): string;
  failNext(...replies: FakeReply[]): void;
};

const graphError = (status: number, message: string, code = 100): FakeReply => ({
  status,
  json: { error: { message, type: 'OAuthException', code } },
});

export async function startFakeGraph(): Promise<FakeGraph> {
  const sent: WhatsAppSent[] = [];
  const audioSent: WhatsAppAudioSent[] = [];
  const uploads: WhatsAppUpload[] = [];
  const downloads: string[] = [];
  const media = new Map<string, { bytes: Uint8Array; mimeType: string }>();
  const scripted: FakeReply[] = [];
  let seq = 1;
  let base = '';
  const http = await startFakeHttp(async (request) => {
    if (request.headers.authorization !== `Bearer ${FAKE_WHATSAPP_TOKEN}`) {
      return graphError(401, 'Invalid OAuth access token.', 190);
    }
    const download = /^\/media-download\/(.+)$/.exec(request.path);
    if (download && request.method === 'GET') {
      const found = media.get(download[1]!);
      if (!found) return { status: 404, json: {} };
      downloads.push(download[1]!);
      return { status: 200, bytes: found.bytes, headers: { 'content-type': found.mimeType } };
    }
    if (request.path === `/v21.0/${FAKE_PHONE_NUMBER_ID}` && request.method === 'GET') {
      return {
        status: 200,
        json: {
          display_phone_number: '+1 555-0100',
          verified_name: 'Steward Test',
          id: FAKE_PHONE_NUMBER_ID,
        },
      };
    }
    const mediaInfo = /^\/v21\.0\/(\d+)$/.exec(request.path);
    if (mediaInfo && request.method === 'GET') {
      const found = media.get(mediaInfo[1]!);
      if (!found) return graphError(400, 'Unsupported get request. Object does not exist');
      return {
        status: 200,
        json: {
          messaging_product: 'whatsapp',
          url: `${base}/media-download/${mediaInfo[1]}`,
          mime_type: found.mimeType,
          file_size: found.bytes.length,
          id: mediaInfo[1],
        },
      };
    }
    if (request.path === `/v21.0/${FAKE_PHONE_NUMBER_ID}/media` && request.method === 'POST') {
      if (scripted.length) return scripted.shift()!;
      const form = await new Response(request.bytes, {
        headers: { 'content-type': request.headers['content-type'] ?? '' },
      })
        .formData()
        .catch(() => null);
      const file = form?.get('file');
      if (!form || !(file instanceof File) || form.get('messaging_product') !== 'whatsapp') {
        return graphError(400, '(#100) Invalid parameter');
      }
      const type = String(form.get('type') ?? '');
      if (!['audio/ogg', 'audio/mpeg', 'audio/aac', 'audio/amr', 'audio/mp4'].includes(type)) {
        return graphError(400, `(#131053) Media upload error: unsupported type ${type}`, 131053);
      }
      const id = String(900_000 + seq++);
      uploads.push({
        id,
        type,
        audio: Buffer.from(await file.arrayBuffer()),
        messagingProduct: 'whatsapp',
      });
      return { status: 200, json: { id } };
    }
    if (request.path !== `/v21.0/${FAKE_PHONE_NUMBER_ID}/messages`) {
      return graphError(400, 'Unsupported post request.');
    }
    if (scripted.length) return scripted.shift()!;
    const body = (request.body ?? {}) as {
      to?: string;
      type?: string;
      text?: { body?: string };
      audio?: { id?: string };
      messaging_product?: string;
    };
    const id = `wamid.HBgLMTY1MDM4Nzk0MzkVAgARGBI${seq++}`;
    if (body.messaging_product === 'whatsapp' && body.type === 'audio' && body.to && body.audio?.id) {
      if (!uploads.some((upload) => upload.id === body.audio!.id)) {
        return graphError(400, '(#131053) Media not found');
      }
      audioSent.push({ to: body.to, mediaId: body.audio.id, id });
    } else if (body.messaging_product === 'whatsapp' && body.type === 'text' && body.to && body.text?.body) {
      sent.push({ to: body.to, body: body.text.body, id });
    } else {
      return graphError(400, '(#100) Invalid parameter');
    }
    return {
      status: 200,
      json: {
        messaging_product: 'whatsapp',
        contacts: [{ input: body.to, wa_id: body.to }],
        messages: [{ id }],
      },
    };
  });
  base = http.url;
  return {
    ...http,
    graphUrl: `${http.url}/v21.0`,
    sent,
    audioSent,
    uploads,
    downloads,
    addMedia: (bytes, mimeType = 'audio/ogg; codecs=opus') => {
      const id = String(1_000_000 + seq++);
      media.set(id, { bytes, mimeType });
      return id;
    },
    failNext: (...replies) => scripted.push(...replies),
  };
}
