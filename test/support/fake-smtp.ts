import { SMTPServer } from 'smtp-server';

export type ReceivedMail = { from: string; to: string[]; raw: string; secure: boolean };

/**
 * A real SMTP server (smtp-server) on 127.0.0.1 that keeps what it receives. No TLS is offered
 * unless `offerStartTls` (then STARTTLS with smtp-server's own self-signed certificate).
 */
export async function startFakeSmtp(options: { user: string; password: string; offerStartTls?: boolean }) {
  const received: ReceivedMail[] = [];
  /** Answers to give the next MAIL FROM commands instead of accepting (`451 4.3.0 try later`). */
  const failures: Array<{ code: number; message: string }> = [];
  let attempts = 0;
  const server = new SMTPServer({
    disabledCommands: options.offerStartTls ? [] : ['STARTTLS'],
    authOptional: false,
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === options.user && auth.password === options.password)
        callback(null, { user: auth.username });
      else callback(new Error('Invalid username or password'));
    },
    onMailFrom(_address, _session, callback) {
      attempts++;
      const failure = failures.shift();
      if (!failure) return callback();
      const error = new Error(failure.message) as Error & { responseCode: number };
      error.responseCode = failure.code;
      callback(error);
    },
    onData(stream, session, callback) {
      let raw = '';
      stream.on('data', (chunk: Buffer) => {
        raw += chunk.toString('utf8');
      });
      stream.on('end', () => {
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((entry) => entry.address),
          raw,
          secure: session.secure,
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.server.address() as { port: number }).port;
  return {
    port,
    url: `smtp://${encodeURIComponent(options.user)}:${encodeURIComponent(options.password)}@127.0.0.1:${port}`,
    received,
    /** MAIL FROM commands seen (sending attempts). */
    attempts: () => attempts,
    failNext(...answers: Array<{ code: number; message: string }>) {
      failures.push(...answers);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
