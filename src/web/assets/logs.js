// The Logs page, live: new lines of the chosen level arrive over server-sent events from /logs/stream.
(() => {
  const list = document.getElementById('log-lines');
  if (!list) return;
  const level = list.dataset.level || 'info';
  const live = document.getElementById('log-live');
  const MAX_LINES = 2000;
  const el = (tag, className, text) => {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  };
  // Changing the level shows that level at once (the form still works without this script).
  document.getElementById('log-level')?.addEventListener('change', (event) => {
    event.target.form.submit();
  });
  const atBottom = () => window.innerHeight + window.scrollY >= document.body.scrollHeight - 40;
  const source = new EventSource(`/logs/stream?level=${encodeURIComponent(level)}`);
  source.addEventListener('open', () => {
    if (live) live.textContent = `Live: new lines at ${level} or above appear below as they are written.`;
  });
  source.addEventListener('error', () => {
    if (live) live.textContent = 'The live tail was interrupted; reconnecting…';
  });
  source.addEventListener('line', (event) => {
    const entry = JSON.parse(event.data);
    const follow = atBottom();
    document.getElementById('log-empty')?.remove();
    const item = el('li', `log-line level-${entry.level || 'text'} new`);
    item.appendChild(el('span', 'log-time', entry.time ? entry.time.replace('T', ' ').slice(0, 19) : ''));
    item.appendChild(document.createTextNode(' '));
    item.appendChild(el('span', 'badge', entry.level || 'text'));
    item.appendChild(document.createTextNode(' '));
    item.appendChild(el('span', 'log-msg', entry.msg));
    if (entry.fields) {
      item.appendChild(document.createTextNode(' '));
      item.appendChild(el('span', 'log-fields', entry.fields));
    }
    list.appendChild(item);
    while (list.children.length > MAX_LINES) list.firstElementChild.remove();
    if (follow) item.scrollIntoView({ block: 'end' });
  });
})();
