// The web chat: Enter sends, the reply streams into its element as server-sent events.
(() => {
  const form = document.getElementById('chat-form');
  if (!form) return;
  const text = form.querySelector('textarea[name="text"]');
  const list = document.getElementById('messages');
  const csrf = form.querySelector('input[name="csrf"]').value;
  const button = form.querySelector('button[type="submit"]');

  text.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      form.requestSubmit();
    }
  });

  const add = (role, content) => {
    const item = document.createElement('li');
    item.className = role === 'user' ? 'message user' : 'message reply markdown streaming';
    item.dataset.role = role;
    item.textContent = content;
    list.appendChild(item);
    document.getElementById('chat-empty')?.remove();
    item.scrollIntoView({ block: 'end' });
    return item;
  };

  const traceLink = (item, turnId) => {
    if (!turnId || item.querySelector('a.trace')) return;
    const link = document.createElement('a');
    link.className = 'trace';
    link.href = `/turns/${encodeURIComponent(turnId)}`;
    link.textContent = 'trace';
    item.appendChild(link);
  };

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const message = text.value;
    if (!message.trim()) return;
    add('user', message);
    text.value = '';
    button.disabled = true;
    const reply = add('reply', '');
    reply.setAttribute('aria-busy', 'true');
    let turnId = null;
    let streamed = '';
    try {
      const response = await fetch('/chat/stream', {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'x-csrf-token': csrf,
          accept: 'text/event-stream',
        },
        body: new URLSearchParams({ text: message }),
      });
      if (!response.ok || !response.body) throw new Error(`the server answered ${response.status}`);
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let cut = buffer.indexOf('\n\n');
        while (cut >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          cut = buffer.indexOf('\n\n');
          const type = /^event: ?(.*)$/m.exec(block)?.[1] ?? 'message';
          const data = block
            .split('\n')
            .filter((line) => line.startsWith('data:'))
            .map((line) => line.slice(5).trimStart())
            .join('\n');
          if (!data) continue;
          const payload = JSON.parse(data);
          if (type === 'turn') {
            turnId = payload.turnId;
            traceLink(reply, turnId);
          } else if (type === 'delta') {
            streamed += payload.text;
            reply.textContent = streamed;
            traceLink(reply, turnId);
          } else if (type === 'done') {
            reply.classList.remove('streaming');
            // `/new` started a new conversation: the old one leaves the view, only the confirmation stays.
            if (message.trim() === '/new') list.replaceChildren(reply);
            // Rendered on the server from markdown, with every raw HTML character escaped.
            reply.innerHTML = payload.html;
            traceLink(reply, payload.turnId ?? turnId);
          } else if (type === 'error') {
            reply.classList.remove('streaming');
            reply.classList.add('error');
            reply.textContent = payload.message;
          }
        }
      }
    } catch (error) {
      reply.classList.add('error');
      reply.textContent = `Could not send: ${error.message}. Reload the page and try again.`;
    } finally {
      reply.removeAttribute('aria-busy');
      button.disabled = false;
      text.focus();
    }
  });
})();
