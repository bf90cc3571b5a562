import { type FakeHttp, type FakeReply, startFakeHttp } from './fake-http.ts';

/* A fake Meta Graph API for the WhatsApp Cloud API: POST /{version}/{phone_number_id}/messages. */

export const FAKE_WHATSAPP_TOKEN = 'EAAG-fake-whatsapp-token';
export const FAKE_PHONE_NUMBER_ID = '106540352242922';

export type WhatsAppSent = { to: string; body: string; id: string };

export type FakeGraph = FakeHttp & {
  /** The Graph URL to configure (with its version). */
  readonly graphUrl: string;
  readonly sent: WhatsAppSent[];
  failNext(...replies: FakeReply[]): void;
};

export async function startFakeGraph(): Promise<FakeGraph> {
  const sent: WhatsAppSent[] = [];
  const scripted: FakeReply[] = [];
  let seq = 1;
  const http = await startFakeHttp((request) => {
    if (request.headers.authorization !== `Bearer ${FAKE_WHATSAPP_TOKEN}`) {
      return {
        status: 401,
        json: { error: { message: 'Invalid OAuth access token.', type: 'OAuthException', code: 190 } },
      };
    }
    if (request.path !== `/v21.0/${FAKE_PHONE_NUMBER_ID}/messages`) {
      return {
        status: 400,
        json: { error: { message: 'Unsupported post request.', type: 'GraphMethodException', code: 100 } },
      };
    }
    if (scripted.length) return scripted.shift()!;
    const body = (request.body ?? {}) as {
      to?: string;
      type?: string;
      text?: { body?: string };
      messaging_product?: string;
    };
    if (body.messaging_product !== 'whatsapp' || body.type !== 'text' || !body.to || !body.text?.body) {
      return {
        status: 400,
        json: { error: { message: '(#100) Invalid parameter', type: 'OAuthException', code: 100 } },
      };
    }
    const id = `wamid.HBgLMTY1MDM4Nzk0MzkVAgARGBI${seq++}`;
    sent.push({ to: body.to, body: body.text.body, id });
    return {
      status: 200,
      json: {
        messaging_product: 'whatsapp',
        contacts: [{ input: body.to, wa_id: body.to }],
        messages: [{ id }],
      },
    };
  });
  return {
    ...http,
    graphUrl: `${http.url}/v21.0`,
    sent,
    failNext: (...replies) => scripted.push(...replies),
  };
}
