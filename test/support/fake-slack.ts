import { type FakeHttp, type FakeReply, type RecordedRequest, startFakeHttp } from './fake-http.ts';

/* A fake Slack Web API (`{SLACK_API_URL}<method>`): auth.test and chat.postMessage, bearer-checked. */

export const FAKE_SLACK_TOKEN = 'xoxb-fake-0000-token';
export const FAKE_SLACK_BOT_USER = 'U0LAN0Z89';

export type SlackPost = { channel: string; text: string; thread_ts?: string; ts: string };

export type FakeSlack = FakeHttp & {
  /** The API URL to configure (ends with /api/). */
  readonly apiUrl: string;
  readonly posts: SlackPost[];
  failNext(method: string, ...replies: FakeReply[]): void;
  calls(method: string): RecordedRequest[];
};

export async function startFakeSlack(): Promise<FakeSlack> {
  const posts: SlackPost[] = [];
  const scripted = new Map<string, FakeReply[]>();
  let seq = 100;
  const http = await startFakeHttp((request) => {
    const method = request.path.replace(/^\/api\//, '');
    if (request.headers.authorization !== `Bearer ${FAKE_SLACK_TOKEN}`) {
      return { status: 200, json: { ok: false, error: 'invalid_auth' } };
    }
    const script = scripted.get(method);
    if (script?.length) return script.shift()!;
    const body = request.body ?? {};
    if (method === 'auth.test') {
      return {
        status: 200,
        json: { ok: true, user_id: FAKE_SLACK_BOT_USER, bot_id: 'B0LAN0Z89', team_id: 'T123ABC456' },
      };
    }
    if (method === 'chat.postMessage') {
      const ts = `1700000000.${String(seq++).padStart(6, '0')}`;
      posts.push({
        channel: String(body.channel),
        text: String(body.text),
        ...(body.thread_ts ? { thread_ts: String(body.thread_ts) } : {}),
        ts,
      });
      return { status: 200, json: { ok: true, channel: body.channel, ts, message: { text: body.text, ts } } };
    }
    return { status: 200, json: { ok: false, error: 'unknown_method' } };
  });
  return {
    ...http,
    apiUrl: `${http.url}/api/`,
    posts,
    failNext: (method, ...replies) => scripted.set(method, [...(scripted.get(method) ?? []), ...replies]),
    calls: (method) => http.requests.filter((request) => request.path === `/api/${method}`),
  };
}
