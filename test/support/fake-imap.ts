import { createServer, type Socket } from 'node:net';
import addressparser from 'nodemailer/lib/addressparser/index.js';

/*
 * A small real IMAP4rev1 responder, enough for imapflow: LOGIN, CAPABILITY, LIST/LSUB (with
 * special-use), SELECT/EXAMINE, UID SEARCH, UID FETCH (UID FLAGS ENVELOPE INTERNALDATE BODY[]),
 * UID STORE, UID MOVE, CREATE, APPEND (literal), IDLE (unless `idle: false`), NOOP, LOGOUT.
 * One user, in-memory mailboxes; a message added is announced (`* N EXISTS`) to every session
 * that has its mailbox selected, as servers do during IDLE.
 */

export type FakeImapMessage = { uid: number; flags: Set<string>; raw: Buffer; internalDate: Date };
type Mailbox = {
  name: string;
  specialUse?: string;
  uidNext: number;
  uidValidity: number;
  messages: FakeImapMessage[];
};

export type FakeImap = {
  port: number;
  url: string;
  mailboxes: Map<string, Mailbox>;
  add(mailbox: string, raw: string, options?: { flags?: string[]; date?: Date }): number;
  /** Every command line received (for assertions). */
  commands: string[];
  /** The mailbox rebuilt: a new UIDVALIDITY, its messages renumbered from 1. */
  rebuild(mailbox: string): void;
  /** Open connections. */
  connections(): number;
  /** Ends every connection (a server restart). */
  dropConnections(): void;
  close(): Promise<void>;
};

const CAPABILITIES = 'IMAP4rev1 MOVE UIDPLUS SPECIAL-USE';

/** `offerStartTls`: advertise STARTTLS (as most servers on port 143 do) and refuse it if asked. */
export async function startFakeImap(options: {
  user: string;
  password: string;
  offerStartTls?: boolean;
  /** Offer IDLE (default true). */
  idle?: boolean;
}): Promise<FakeImap> {
  const mailboxes = new Map<string, Mailbox>();
  for (const [name, specialUse] of [
    ['INBOX'],
    ['Drafts', '\\Drafts'],
    ['Archive', '\\Archive'],
    ['Sent', '\\Sent'],
  ] as const) {
    mailboxes.set(name, { name, specialUse, uidNext: 1, uidValidity: 7, messages: [] });
  }
  const commands: string[] = [];
  const watchers = new Set<(mailbox: Mailbox) => void>();
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    // Many small writes per answer: without this, Nagle and delayed ACKs stall each one ~40 ms.
    socket.setNoDelay(true);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    session(socket, { ...options, mailboxes, commands, watchers });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    url: `imap://${encodeURIComponent(options.user)}:${encodeURIComponent(options.password)}@127.0.0.1:${port}`,
    mailboxes,
    commands,
    add(name, raw, addOptions = {}) {
      const mailbox = mailboxes.get(name)!;
      const uid = mailbox.uidNext++;
      mailbox.messages.push({
        uid,
        flags: new Set(addOptions.flags ?? []),
        raw: Buffer.from(raw.replace(/\r?\n/g, '\r\n')),
        internalDate: addOptions.date ?? new Date(),
      });
      for (const watcher of watchers) watcher(mailbox);
      return uid;
    },
    rebuild(name) {
      const mailbox = mailboxes.get(name)!;
      mailbox.uidValidity++;
      mailbox.uidNext = 1;
      for (const message of mailbox.messages) message.uid = mailbox.uidNext++;
    },
    connections: () => sockets.size,
    dropConnections() {
      for (const socket of sockets) socket.destroy();
    },
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

type SessionState = {
  user: string;
  password: string;
  offerStartTls?: boolean;
  mailboxes: Map<string, Mailbox>;
  commands: string[];
  watchers: Set<(mailbox: Mailbox) => void>;
  idle?: boolean;
};

function session(socket: Socket, state: SessionState): void {
  let buffer = Buffer.alloc(0);
  let selected: Mailbox | null = null;
  let authed = false;
  let pendingAppend: { tag: string; mailbox: Mailbox; flags: string[]; size: number } | null = null;
  let idleTag: string | null = null;
  const send = (text: string | Buffer) => {
    if (!socket.destroyed) socket.write(text);
  };
  const announce = (mailbox: Mailbox) => {
    if (selected === mailbox) send(`* ${mailbox.messages.length} EXISTS\r\n`);
  };
  state.watchers.add(announce);
  socket.on('close', () => state.watchers.delete(announce));
  const base = state.idle === false ? CAPABILITIES : `${CAPABILITIES} IDLE`;
  const capabilities = state.offerStartTls ? `${base} STARTTLS` : base;
  send(`* OK [CAPABILITY ${capabilities}] fake IMAP ready\r\n`);

  const handle = (line: string) => {
    state.commands.push(line);
    if (idleTag) {
      if (line.trim().toUpperCase() === 'DONE') send(`${idleTag} OK IDLE terminated\r\n`);
      else send(`${idleTag} BAD expected DONE\r\n`);
      idleTag = null;
      return;
    }
    const tokens = tokenize(line);
    const tag = tokens[0] ?? '*';
    let command = (tokens[1] ?? '').toUpperCase();
    let args = tokens.slice(2);
    let byUid = false;
    if (command === 'UID') {
      byUid = true;
      command = `${(args[0] ?? '').toUpperCase()}`;
      args = args.slice(1);
    }
    const ok = (text = `${command} completed`) => send(`${tag} OK ${text}\r\n`);
    const no = (text: string) => send(`${tag} NO ${text}\r\n`);
    switch (command) {
      case 'CAPABILITY':
        send(`* CAPABILITY ${capabilities}\r\n`);
        return ok();
      case 'STARTTLS':
        return send(`${tag} BAD this fake speaks no TLS\r\n`);
      case 'NOOP':
        return ok();
      case 'LOGIN':
        if (args[0] === state.user && args[1] === state.password) {
          authed = true;
          return ok(`[CAPABILITY ${base}] LOGIN completed`);
        }
        return no('[AUTHENTICATIONFAILED] Invalid credentials');
      case 'LOGOUT':
        send('* BYE logging out\r\n');
        ok();
        socket.end();
        return;
    }
    if (!authed) return send(`${tag} BAD not authenticated\r\n`);
    switch (command) {
      case 'LIST':
      case 'LSUB': {
        if (args[1] === '') {
          send(`* ${command} (\\Noselect) "/" ""\r\n`);
          return ok();
        }
        for (const mailbox of state.mailboxes.values()) {
          const flags = ['\\HasNoChildren', ...(mailbox.specialUse ? [mailbox.specialUse] : [])].join(' ');
          send(`* ${command} (${flags}) "/" ${quote(mailbox.name)}\r\n`);
        }
        return ok();
      }
      case 'CREATE': {
        const name = args[0]!;
        if (!state.mailboxes.has(name))
          state.mailboxes.set(name, { name, uidNext: 1, uidValidity: 7, messages: [] });
        return ok();
      }
      case 'SELECT':
      case 'EXAMINE': {
        const mailbox = findMailbox(state, args[0] ?? '');
        if (!mailbox) return no('[NONEXISTENT] no such mailbox');
        selected = mailbox;
        send('* FLAGS (\\Answered \\Flagged \\Deleted \\Seen \\Draft)\r\n');
        send('* OK [PERMANENTFLAGS (\\Answered \\Flagged \\Deleted \\Seen \\Draft \\*)] flags\r\n');
        send(`* ${mailbox.messages.length} EXISTS\r\n* 0 RECENT\r\n`);
        send(`* OK [UIDVALIDITY ${mailbox.uidValidity}] uids\r\n* OK [UIDNEXT ${mailbox.uidNext}] next\r\n`);
        return ok(`[${command === 'SELECT' ? 'READ-WRITE' : 'READ-ONLY'}] ${command} completed`);
      }
      case 'APPEND': {
        const mailbox = findMailbox(state, args[0] ?? '');
        const literal = /\{(\d+)\+?\}$/.exec(line);
        if (!mailbox || !literal) return no('[TRYCREATE] no such mailbox');
        const flags = args
          .slice(1)
          .filter((token) => token.startsWith('\\') || /^[A-Za-z$]/.test(token))
          .filter((token) => !token.startsWith('{'));
        pendingAppend = { tag, mailbox, flags, size: Number(literal[1]) };
        send('+ Ready for literal data\r\n');
        return;
      }
    }
    if (!selected) return send(`${tag} BAD no mailbox selected\r\n`);
    const mailbox = selected;
    switch (command) {
      case 'SEARCH': {
        const { match } = parseCriteria(
          args.filter((token) => token !== '(' && token !== ')'),
          0,
          mailbox,
        );
        const found = mailbox.messages
          .filter(match)
          .map((message) => (byUid ? message.uid : seqOf(mailbox, message)));
        send(`* SEARCH${found.length ? ` ${found.join(' ')}` : ''}\r\n`);
        return ok();
      }
      case 'FETCH': {
        const messages = resolveSet(mailbox, args[0] ?? '', byUid);
        const wantBody = /BODY(\.PEEK)?\[\]/i.test(line);
        const items = line.toUpperCase();
        for (const message of messages) {
          const parts: Array<string | Buffer> = [`UID ${message.uid}`];
          if (items.includes('FLAGS')) parts.push(`FLAGS (${[...message.flags].join(' ')})`);
          if (items.includes('INTERNALDATE')) parts.push(`INTERNALDATE "${imapDate(message.internalDate)}"`);
          if (items.includes('RFC822.SIZE')) parts.push(`RFC822.SIZE ${message.raw.length}`);
          if (items.includes('ENVELOPE')) parts.push(`ENVELOPE ${envelope(message.raw)}`);
          if (wantBody) {
            parts.push(Buffer.concat([Buffer.from(`BODY[] {${message.raw.length}}\r\n`), message.raw]));
            if (!/BODY\.PEEK/i.test(line)) message.flags.add('\\Seen');
          }
          send(`* ${seqOf(mailbox, message)} FETCH (`);
          parts.forEach((part, index) => {
            if (index > 0) send(' ');
            send(part);
          });
          send(')\r\n');
        }
        return ok();
      }
      case 'STORE': {
        const messages = resolveSet(mailbox, args[0] ?? '', byUid);
        const mode = (args[1] ?? '').toUpperCase();
        const flags = args.slice(2).filter((token) => token !== '(' && token !== ')');
        for (const message of messages) {
          if (mode.startsWith('+')) for (const flag of flags) message.flags.add(flag);
          else if (mode.startsWith('-')) for (const flag of flags) message.flags.delete(flag);
          else message.flags = new Set(flags);
          if (!mode.endsWith('.SILENT'))
            send(
              `* ${seqOf(mailbox, message)} FETCH (UID ${message.uid} FLAGS (${[...message.flags].join(' ')}))\r\n`,
            );
        }
        return ok();
      }
      case 'MOVE':
      case 'COPY': {
        const target = findMailbox(state, args[1] ?? '');
        if (!target) return no('[TRYCREATE] no such mailbox');
        const messages = resolveSet(mailbox, args[0] ?? '', byUid);
        for (const message of messages) {
          target.messages.push({ ...message, uid: target.uidNext++, flags: new Set(message.flags) });
          if (command === 'MOVE') {
            send(`* ${seqOf(mailbox, message)} EXPUNGE\r\n`);
            mailbox.messages.splice(mailbox.messages.indexOf(message), 1);
          }
        }
        return ok();
      }
      case 'IDLE':
        if (state.idle === false) return send(`${tag} BAD unknown command IDLE\r\n`);
        idleTag = tag;
        return send('+ idling\r\n');
      case 'CLOSE':
      case 'UNSELECT':
        selected = null;
        return ok();
      default:
        return send(`${tag} BAD unknown command ${command}\r\n`);
    }
  };

  socket.on('data', (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk]);
    for (;;) {
      if (pendingAppend) {
        if (buffer.length < pendingAppend.size + 2) return;
        const raw = buffer.subarray(0, pendingAppend.size);
        buffer = buffer.subarray(pendingAppend.size);
        const end = buffer.indexOf('\r\n');
        buffer = buffer.subarray(end + 2);
        const { tag, mailbox, flags } = pendingAppend;
        pendingAppend = null;
        const uid = mailbox.uidNext++;
        mailbox.messages.push({
          uid,
          flags: new Set(flags),
          raw: Buffer.from(raw),
          internalDate: new Date(),
        });
        for (const watcher of state.watchers) watcher(mailbox);
        send(`${tag} OK [APPENDUID ${mailbox.uidValidity} ${uid}] APPEND completed\r\n`);
        continue;
      }
      const end = buffer.indexOf('\r\n');
      if (end < 0) return;
      const line = buffer.subarray(0, end).toString('utf8');
      buffer = buffer.subarray(end + 2);
      handle(line);
    }
  });
}

function findMailbox(state: SessionState, name: string): Mailbox | null {
  if (name.toUpperCase() === 'INBOX') return state.mailboxes.get('INBOX')!;
  return state.mailboxes.get(name) ?? null;
}

function seqOf(mailbox: Mailbox, message: FakeImapMessage): number {
  return mailbox.messages.indexOf(message) + 1;
}

function resolveSet(mailbox: Mailbox, set: string, byUid: boolean): FakeImapMessage[] {
  const max = byUid
    ? Math.max(0, ...mailbox.messages.map((message) => message.uid))
    : mailbox.messages.length;
  const wanted = (value: number) =>
    set.split(',').some((range) => {
      const [low, high] = range.split(':').map((part) => (part === '*' ? max : Number(part))) as [
        number,
        number?,
      ];
      const top = high ?? low;
      return value >= Math.min(low, top) && value <= Math.max(low, top);
    });
  return mailbox.messages.filter((message, index) => wanted(byUid ? message.uid : index + 1));
}

type Criterion = { match: (message: FakeImapMessage) => boolean; next: number };

function parseCriteria(tokens: string[], start: number, mailbox: Mailbox): Criterion {
  const all: Array<(message: FakeImapMessage) => boolean> = [];
  let index = start;
  while (index < tokens.length) {
    const one = parseOne(tokens, index, mailbox);
    all.push(one.match);
    index = one.next;
  }
  return { match: (message) => all.every((match) => match(message)), next: index };
}

function parseOne(tokens: string[], index: number, mailbox: Mailbox): Criterion {
  const key = (tokens[index] ?? '').toUpperCase();
  const value = tokens[index + 1] ?? '';
  const header = (name: string) => (message: FakeImapMessage) =>
    headerValue(message.raw, name).toLowerCase().includes(value.toLowerCase());
  switch (key) {
    case 'ALL':
      return { match: () => true, next: index + 1 };
    case 'SEEN':
      return { match: (message) => message.flags.has('\\Seen'), next: index + 1 };
    case 'UNSEEN':
      return { match: (message) => !message.flags.has('\\Seen'), next: index + 1 };
    case 'FROM':
    case 'TO':
    case 'CC':
    case 'SUBJECT':
      return { match: header(key.toLowerCase()), next: index + 2 };
    case 'BODY':
    case 'TEXT':
      return {
        match: (message) => message.raw.toString('utf8').toLowerCase().includes(value.toLowerCase()),
        next: index + 2,
      };
    case 'SINCE':
      return { match: (message) => message.internalDate.getTime() >= parseImapDate(value), next: index + 2 };
    case 'BEFORE':
      return { match: (message) => message.internalDate.getTime() < parseImapDate(value), next: index + 2 };
    case 'KEYWORD':
      return { match: (message) => message.flags.has(value), next: index + 2 };
    case 'UNKEYWORD':
      return { match: (message) => !message.flags.has(value), next: index + 2 };
    case 'UID': {
      const uids = new Set(resolveSet(mailbox, value, true).map((message) => message.uid));
      return { match: (message) => uids.has(message.uid), next: index + 2 };
    }
    case 'CHARSET':
      return { match: () => true, next: index + 2 };
    case 'NOT': {
      const inner = parseOne(tokens, index + 1, mailbox);
      return { match: (message) => !inner.match(message), next: inner.next };
    }
    case 'OR': {
      const left = parseOne(tokens, index + 1, mailbox);
      const right = parseOne(tokens, left.next, mailbox);
      return { match: (message) => left.match(message) || right.match(message), next: right.next };
    }
    default:
      return { match: () => true, next: index + 1 };
  }
}

function tokenize(line: string): string[] {
  const tokens: string[] = [];
  let index = 0;
  while (index < line.length) {
    const char = line[index]!;
    if (char === ' ') index++;
    else if (char === '(' || char === ')') {
      tokens.push(char);
      index++;
    } else if (char === '"') {
      let value = '';
      index++;
      while (index < line.length && line[index] !== '"') {
        if (line[index] === '\\') index++;
        value += line[index] ?? '';
        index++;
      }
      tokens.push(value);
      index++;
    } else {
      let value = '';
      let depth = 0;
      while (
        index < line.length &&
        (depth > 0 || (line[index] !== ' ' && line[index] !== ')' && line[index] !== '('))
      ) {
        if (line[index] === '[') depth++;
        if (line[index] === ']') depth--;
        value += line[index];
        index++;
      }
      tokens.push(value);
    }
  }
  return tokens;
}

function headerSection(raw: Buffer): string {
  const text = raw.toString('utf8');
  const end = text.indexOf('\r\n\r\n');
  return (end < 0 ? text : text.slice(0, end)).replace(/\r\n[ \t]+/g, ' ');
}

function headerValue(raw: Buffer, name: string): string {
  const line = headerSection(raw)
    .split('\r\n')
    .find((entry) => entry.toLowerCase().startsWith(`${name.toLowerCase()}:`));
  return line ? line.slice(name.length + 1).trim() : '';
}

function quote(value: string | null): string {
  if (value === null || value === '') return value === null ? 'NIL' : '""';
  if (/[\r\n]|[^\x20-\x7e]/.test(value)) return `{${Buffer.byteLength(value)}}\r\n${value}`;
  return `"${value.replace(/["\\]/g, '\\$&')}"`;
}

function addresses(raw: Buffer, name: string): string {
  const value = headerValue(raw, name);
  if (!value) return 'NIL';
  const parsed = addressparser(value, { flatten: true });
  const items = parsed.map((entry) => {
    const [local, domain] = (entry.address ?? '').split('@');
    return `(${quote(entry.name || null)} NIL ${quote(local ?? '')} ${quote(domain ?? '')})`;
  });
  return items.length ? `(${items.join('')})` : 'NIL';
}

function envelope(raw: Buffer): string {
  const field = (name: string) => quote(headerValue(raw, name) || null);
  const from = addresses(raw, 'from');
  return `(${field('date')} ${field('subject')} ${from} ${from} ${from} ${addresses(raw, 'to')} ${addresses(raw, 'cc')} NIL ${field('in-reply-to')} ${field('message-id')})`;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

function imapDate(date: Date): string {
  const pad = (value: number) => String(value).padStart(2, '0');
  return `${pad(date.getUTCDate())}-${MONTHS[date.getUTCMonth()]}-${date.getUTCFullYear()} ${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())} +0000`;
}

function parseImapDate(value: string): number {
  const [day, month, year] = value.split('-');
  return Date.UTC(Number(year), MONTHS.indexOf(month ?? ''), Number(day));
}
