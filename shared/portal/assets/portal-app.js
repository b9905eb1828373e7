// The customer portal: endpoints, their deliveries and attempts, on the
// account's JSON API. Plain JavaScript, no build step, nothing fetched but the
// API this page is served by. The session token arrives in the URL fragment
// (#token=...), which browsers never send to a server; it is moved to
// sessionStorage at once, the fragment is cleared, and every API call sends
// it as a bearer header. Text from the API is only ever set as textContent.
'use strict';

(function () {
  // The page is at <base>/portal/ (or <base>/portal, should a gateway drop the slash); the API at <base>/v1/.
  const API = new URL(location.pathname.replace(/\/portal\/?$/, '/') + 'v1/', location.origin);
  const KEY = 'gifq-portal-token';
  const main = document.getElementById('main');

  // ---- session ---------------------------------------------------------

  function takeToken() {
    const frag = new URLSearchParams(location.hash.slice(1));
    if (frag.get('token')) {
      sessionStorage.setItem(KEY, frag.get('token'));
      sessionStorage.setItem(KEY + '-ro', frag.get('read_only') === '1' ? '1' : '');
      history.replaceState(null, '', location.pathname + location.search + '#/endpoints');
    }
    return sessionStorage.getItem(KEY);
  }
  const token = takeToken();
  const readOnly = sessionStorage.getItem(KEY + '-ro') === '1';

  class APIError extends Error {
    constructor(status, code, message) { super(message); this.status = status; this.code = code; }
  }

  async function call(method, path, body) {
    const opts = { method, headers: { Authorization: 'Bearer ' + token }, cache: 'no-store', referrerPolicy: 'no-referrer' };
    if (body !== undefined) {
      opts.headers['Content-Type'] = 'application/json';
      opts.body = JSON.stringify(body);
    }
    const res = await fetch(new URL(path, API), opts);
    const text = await res.text();
    const data = text ? JSON.parse(text) : null;
    if (!res.ok) {
      const e = (data && data.error) || {};
      throw new APIError(res.status, e.code || 'http_' + res.status, e.message || res.statusText);
    }
    return data;
  }

  // ---- small DOM helpers -------------------------------------------------

  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === false || v === null || v === undefined) continue;
      if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
      else if (k === 'class') el.className = v;
      else el.setAttribute(k, v === true ? '' : v);
    }
    for (const c of children.flat(Infinity)) {
      if (c === null || c === undefined || c === false) continue;
      el.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return el;
  }

  function show(...nodes) {
    main.replaceChildren(...nodes.filter((n) => n !== null && n !== undefined));
    main.focus({ preventScroll: true });
    window.scrollTo(0, 0);
  }

  function notice(text) {
    const n = document.getElementById('notice');
    n.textContent = text;
    n.hidden = !text;
  }

  function showError(err) {
    const box = document.getElementById('error');
    if (!err) { box.hidden = true; box.textContent = ''; return; }
    if (err.status === 401) return ended();
    box.textContent = err.message || String(err);
    box.hidden = false;
  }

  function ended() {
    sessionStorage.removeItem(KEY);
    document.getElementById('signout').hidden = true;
    show(h('h1', {}, 'This portal session has ended'),
      h('p', { class: 'muted' }, 'It expired, was revoked, or the link was not valid. Open the portal again from your dashboard.'));
  }

  function when(iso) {
    if (!iso) return '—';
    const d = new Date(iso);
    return d.toLocaleString(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit' });
  }

  function relative(iso) {
    const s = Math.round((new Date(iso) - Date.now()) / 1000);
    const abs = Math.abs(s);
    const txt = abs < 90 ? abs + ' s' : abs < 5400 ? Math.round(abs / 60) + ' min' : Math.round(abs / 3600) + ' h';
    return s >= 0 ? 'in ' + txt : txt + ' ago';
  }

  function fact(label, value) {
    return h('div', {}, h('dt', {}, label), h('dd', {}, value));
  }

  function badge(kind, text) { return h('span', { class: 'badge ' + kind }, text); }

  function health(ep) {
    if (ep.disabled) return badge('disabled', 'Disabled');
    if (ep.breaker) return badge('paused', 'Not answering');
    if (ep.failing_since) return badge('failing', 'Failing');
    return badge('ok', 'Healthy');
  }

  // An open circuit breaker: deliveries wait, using no attempts, until one test attempt.
  function paused(ep) {
    return ep.breaker ? fact('Deliveries paused until', when(ep.breaker.open_until)) : null;
  }

  const BREAKER = { closed: 'Closed', open: 'Open', half_open: 'Next attempt is a probe', probing: 'Probing' };

  // The endpoint's health as the API states it (read-only): its breaker, the
  // failures behind it, the last failed attempt, a receiver's pause, and why
  // it is disabled.
  function healthFacts(ep) {
    const hl = ep.health || { breaker: 'closed', consecutive_failures: 0 };
    const breaker = hl.breaker === 'open' ? 'Open until ' + when(hl.breaker_open_until) : BREAKER[hl.breaker] || hl.breaker;
    const last = hl.last_failure_at
      ? when(hl.last_failure_at) + ' · ' + (hl.last_failure_status ? 'HTTP ' + hl.last_failure_status : hl.last_failure_error || 'no answer')
      : 'None';
    return h('section', { class: 'panel soft', 'aria-labelledby': 'health-title' },
      h('h2', { id: 'health-title' }, 'Health'),
      h('dl', { class: 'health-facts', id: 'health' },
        fact('Circuit breaker', breaker),
        // Counted toward opening the breaker; reset when it opens.
        hl.breaker === 'closed' ? fact('Consecutive failures', String(hl.consecutive_failures || 0)) : null,
        fact('Last failure', last),
        hl.paused_until ? fact('Receiver asked to wait until', when(hl.paused_until)) : null,
        fact('Status', ep.disabled ? 'Disabled: ' + (ep.disabled_reason || 'disabled by you') : 'Enabled')));
  }

  function statusBadge(st) { return badge(st, st[0].toUpperCase() + st.slice(1)); }

  // Runs an action from a button: disables it meanwhile, reports errors.
  function action(fn) {
    return async (ev) => {
      const btn = ev && ev.currentTarget;
      if (ev && ev.preventDefault) ev.preventDefault();
      showError(null);
      notice('');
      if (btn) btn.disabled = true;
      try { await fn(ev); } catch (e) { showError(e); } finally { if (btn) btn.disabled = false; }
    };
  }

  function secretPanel(title, secret, extra) {
    const code = h('code', { id: 'secret-value' }, secret);
    return h('section', { class: 'panel secret', 'aria-labelledby': 'secret-title' },
      h('h2', { id: 'secret-title' }, title),
      h('p', {}, 'Copy it now: it is shown only this once. Verify the X-Gifq-Signature header of each webhook with it.'),
      code, extra ? h('p', { class: 'muted' }, extra) : null,
      h('button', { type: 'button', onclick: () => navigator.clipboard && navigator.clipboard.writeText(secret) }, 'Copy secret'));
  }

  // ---- delivery stats (GET .../stats: hourly counters, a few seconds behind)

  function statsOf(id, win) {
    return call('GET', (id ? 'endpoints/' + id + '/stats' : 'stats') + '?window=' + (win || 'day')).catch(() => null);
  }

  // Delivered, of the deliveries that finished in the window.
  function rateBadge(st) {
    if (!st || st.success_rate === null) return badge('disabled rate', 'No deliveries');
    const pct = Math.floor(st.success_rate * 1000) / 10;
    const kind = pct >= 99 ? 'ok' : pct >= 90 ? 'failing' : 'failed';
    const b = badge(kind + ' rate', pct + '% delivered');
    b.title = st.delivered + ' delivered, ' + st.failed + ' failed (last ' + st.window + ')';
    return b;
  }

  function svg(tag, attrs, ...children) {
    const el = document.createElementNS('http://www.w3.org/2000/svg', tag);
    for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
    el.append(...children);
    return el;
  }

  // One bar per hour: delivered (green) under failed (red), scaled to the
  // busiest hour; plain SVG.
  function statsChart(st) {
    const w = 600, ht = 120, n = st.series.length, bw = w / n;
    const top = Math.max(1, ...st.series.map((p) => p.delivered + p.failed));
    const bars = [];
    st.series.forEach((p, i) => {
      const x = (i * bw + bw * 0.1).toFixed(1), width = (bw * 0.8).toFixed(1);
      const dh = (p.delivered / top) * (ht - 4), fh = (p.failed / top) * (ht - 4);
      const tip = svg('title', {}, new Date(p.hour).toLocaleString() + ': ' + p.delivered + ' delivered, ' + p.failed + ' failed, ' + p.attempts + ' attempts');
      if (p.delivered) bars.push(svg('rect', { class: 'bar-ok', x, width, y: (ht - dh).toFixed(1), height: dh.toFixed(1) }, tip));
      if (p.failed) bars.push(svg('rect', { class: 'bar-bad', x, width, y: (ht - dh - fh).toFixed(1), height: fh.toFixed(1) }, tip.cloneNode(true)));
    });
    return svg('svg', { id: 'stats-chart', class: 'chart', viewBox: '0 0 ' + w + ' ' + ht, preserveAspectRatio: 'none', role: 'img',
      'aria-label': 'Deliveries per hour, last ' + st.window + ': ' + st.delivered + ' delivered, ' + st.failed + ' failed' },
    svg('line', { class: 'axis', x1: 0, x2: w, y1: ht - 0.5, y2: ht - 0.5 }), ...bars);
  }

  function statsPanel(st, win, onWindow) {
    const pick = h('select', { id: 'stats-window' }, ['day', 'week'].map((v) => h('option', { value: v, selected: v === win }, v === 'day' ? 'Last 24 hours' : 'Last 7 days')));
    pick.addEventListener('change', () => onWindow(pick.value));
    const head = h('div', { class: 'row spread' }, h('h2', { id: 'stats-title' }, 'Delivery stats'), h('div', { class: 'row' }, rateBadge(st), pick));
    if (!st) return h('section', { class: 'panel soft', id: 'stats' }, head, h('p', { class: 'muted' }, 'Stats are not available.'));
    const classes = Object.entries(st.status_classes).filter(([, v]) => v).map(([k, v]) => k + ': ' + v).join(', ');
    return h('section', { class: 'panel soft', id: 'stats', 'aria-labelledby': 'stats-title' }, head,
      h('dl', { class: 'stats-facts' },
        fact('Attempts', String(st.attempts)), fact('Delivered', String(st.delivered)), fact('Failed', String(st.failed)),
        fact('Dead-lettered', String(st.dead_lettered)),
        fact('Latency', st.attempts ? 'p50 ≤ ' + st.latency_ms.p50 + ' ms, p99 ≤ ' + st.latency_ms.p99 + ' ms' : ''),
        fact('Answers', classes)),
      statsChart(st),
      h('div', { class: 'row spread muted' }, h('span', {}, when(st.from)), h('span', {}, 'now')));
  }

  // ---- endpoints ---------------------------------------------------------

  async function lastSuccess(ep) {
    const page = await call('GET', 'endpoints/' + ep.id + '/deliveries?status=delivered&limit=1');
    return page.data.length ? page.data[0].delivered_at : '';
  }

  // The static addresses webhooks leave from, when the stack has them
  // (egressStaticIps): receivers behind a firewall allowlist these.
  function egressNote(ips) {
    if (!ips.length) return null;
    return h('p', { class: 'muted', id: 'egress-ips' }, 'Webhooks are sent from ',
      h('span', { class: 'mono' }, ips.join(', ')), '. Allow these addresses if your receiver is behind a firewall.');
  }

  async function endpointsView() {
    const [list, egress] = await Promise.all([call('GET', 'endpoints'), call('GET', 'egress-ips').catch(() => ({ ips: [] }))]);
    const successes = await Promise.all(list.data.map((ep) => lastSuccess(ep).catch(() => '')));
    const rates = await Promise.all(list.data.map((ep) => statsOf(ep.id, 'day')));
    const head = h('div', { class: 'row spread' },
      h('h1', {}, 'Endpoints'),
      readOnly ? null : h('button', { type: 'button', class: 'primary', onclick: () => { location.hash = '#/new'; } }, 'Add endpoint'));
    if (!list.data.length) {
      return show(head, h('p', { class: 'muted' }, 'No endpoints yet. Add one to start receiving webhooks.'), egressNote(egress.ips));
    }
    const cards = list.data.map((ep, i) => h('li', { class: 'card' },
      h('div', { class: 'row spread' },
        h('a', { class: 'title mono', href: '#/endpoints/' + ep.id }, target(ep)), h('span', { class: 'row' }, rateBadge(rates[i]), health(ep))),
      ep.description ? h('div', { class: 'muted' }, ep.description) : null,
      h('dl', { class: 'facts' },
        ep.aws ? fact('Type', DESTINATIONS[ep.type] || ep.type) : null,
        fact('Last success', when(successes[i])),
        fact('Failing since', when(ep.failing_since)),
        paused(ep),
        fact('Events', ep.event_types.length ? ep.event_types.join(', ') : 'All events'),
        ep.disabled ? fact('Disabled because', ep.disabled_reason || 'disabled by you') : null)));
    show(head, h('p', { class: 'muted' }, list.data.length + ' of 16 endpoints'), egressNote(egress.ips), h('ul', { class: 'cards' }, cards));
  }

  // ---- the event catalog -------------------------------------------------

  // The account's event types, every page (at most 250). An account without
  // a catalog has none, and its endpoints name event types freely.
  async function catalog() {
    const out = [];
    let cursor = '';
    do {
      const page = await call('GET', 'event-types?limit=100' + (cursor ? '&cursor=' + encodeURIComponent(cursor) : ''));
      out.push(...page.data);
      cursor = page.next_cursor;
    } while (cursor);
    return out;
  }

  function pretty(doc) { return JSON.stringify(doc, null, 2); }

  // A type's description, and its schema and example behind a disclosure.
  function typeDetails(t) {
    return [
      t.description ? h('div', { class: 'muted' }, t.description) : null,
      t.schema !== undefined || t.example !== undefined ? h('details', {},
        h('summary', {}, 'Schema and example'),
        t.schema !== undefined ? [h('div', { class: 'hint' }, 'JSON Schema'), h('pre', { class: 'doc schema' }, pretty(t.schema))] : null,
        t.example !== undefined ? [h('div', { class: 'hint' }, 'Example'), h('pre', { class: 'doc example' }, pretty(t.example))] : null) : null,
    ];
  }

  function typeName(t) {
    return [h('span', { class: 'mono' }, t.name), t.deprecated ? [' ', badge('disabled', 'Deprecated')] : null];
  }

  async function eventTypesView() {
    const types = await catalog();
    if (!types.length) return show(h('h1', {}, 'Event types'), h('p', { class: 'muted' }, 'No event catalog: endpoints may name any event type.'));
    show(h('h1', {}, 'Event types'),
      h('p', { class: 'muted' }, 'The events this account sends. Endpoints subscribe to them by name.'),
      h('ul', { class: 'types', id: 'catalog' }, types.map((t) => h('li', {}, h('div', {}, typeName(t)), typeDetails(t)))));
  }

  // The events feed: what was sent, newest first, of one type if asked, a
  // page at a time; each row opens its body.
  async function eventsView(query) {
    const type = query.get('type') || '';
    const cursor = query.get('cursor') || '';
    const page = await call('GET', 'events?limit=20' + (type ? '&type=' + encodeURIComponent(type) : '') + (cursor ? '&cursor=' + encodeURIComponent(cursor) : ''));
    const filter = h('input', { type: 'text', id: 'event-type-filter', value: type, placeholder: 'payout.fulfilled' });
    const form = h('form', { class: 'row', onsubmit: (e) => { e.preventDefault(); location.hash = '#/events' + (filter.value.trim() ? '?type=' + encodeURIComponent(filter.value.trim()) : ''); } },
      h('label', { for: 'event-type-filter' }, 'Type'), filter, h('button', { type: 'submit' }, 'Filter'));
    const next = new URLSearchParams(type ? { type } : {});
    next.set('cursor', page.next_cursor);
    show(h('h1', {}, 'Events'),
      h('p', { class: 'muted' }, 'Every event sent to this account in the last 30 days, newest first.'),
      form,
      page.data.length ? h('div', { class: 'table-wrap' }, h('table', { id: 'events' },
        h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Received'), h('th', { scope: 'col' }, 'Type'), h('th', { scope: 'col', class: 'hide-narrow' }, 'Event'))),
        h('tbody', {}, page.data.map((e) => h('tr', {},
          h('td', {}, when(e.received_at)),
          h('td', {}, h('details', {}, h('summary', {}, e.event), h('pre', { class: 'payload' }, JSON.stringify(e.body, null, 2)))),
          h('td', { class: 'hide-narrow mono' }, e.id)))))) : h('p', { class: 'muted', id: 'no-events' }, 'No events here.'),
      page.next_cursor ? h('div', { class: 'row pager' }, h('a', { class: 'button', id: 'older-events', href: '#/events?' + next }, 'Older events')) : null);
  }

  // The subscription picker: one checkbox per catalogued type an endpoint
  // may choose (deprecated ones only when it has them already), and a field
  // for prefixes like payout.* (or *). Returns the fields and a reader.
  function typePicker(types, chosen) {
    const names = new Set(types.map((t) => t.name));
    const offered = types.filter((t) => !t.deprecated || chosen.includes(t.name));
    const boxes = offered.map((t, i) => h('input', { type: 'checkbox', id: 'f-type-' + i, value: t.name, checked: chosen.includes(t.name) }));
    const prefixes = h('input', { type: 'text', id: 'f-prefixes', name: 'prefixes', value: chosen.filter((n) => !names.has(n)).join(', '), placeholder: 'payout.*' });
    const fields = h('fieldset', { id: 'f-types' },
      h('legend', {}, 'Event types ', h('span', { class: 'hint' }, '(none chosen: every event)')),
      h('ul', { class: 'types' }, offered.map((t, i) => h('li', {},
        h('div', {}, boxes[i], h('label', { for: 'f-type-' + i }, typeName(t))), typeDetails(t)))),
      h('label', { for: 'f-prefixes' }, 'Prefixes ', h('span', { class: 'hint' }, '(optional, comma separated: payout.* for every payout type)')), prefixes);
    const read = () => boxes.filter((b) => b.checked).map((b) => b.value)
      .concat(prefixes.value.split(',').map((s) => s.trim()).filter(Boolean));
    return { fields, read };
  }

  // The endpoint's type values (docs/destinations.md): an AWS endpoint has
  // no URL; its target is the queue, topic or bus ARN, written to as a role.
  const DESTINATIONS = {
    http: 'HTTPS POST',
    aws_sqs: 'Amazon SQS queue',
    aws_sns: 'Amazon SNS topic',
    aws_eventbridge: 'Amazon EventBridge bus',
    aws_kinesis: 'Amazon Kinesis data stream',
  };
  const target = (ep) => (ep.aws ? ep.aws.target_arn : ep.url);
  const destinationFacts = (ep) => [
    fact('Type', DESTINATIONS[ep.type || 'http'] || ep.type),
    ep.aws ? fact('Role', h('span', { class: 'mono', id: 'aws-role' }, ep.aws.role_arn)) : null,
  ];

  // The endpoint's signature_scheme values (docs/signing.md).
  const SCHEMES = {
    v1: 'v1: HMAC with the signing secret',
    v1a: 'v1a: Ed25519, verified with the public keys',
    both: 'Both v1 and v1a',
  };

  // signingKeysFact links the account's public keys (JWKS) for a v1a endpoint.
  async function signingKeysFact(ep) {
    if (ep.signature_scheme === 'v1') return null;
    const keys = await call('GET', 'signing-keys');
    const url = new URL(keys.jwks_path.replace(/^\/v1\//, ''), API).href;
    return fact('Public keys (JWKS)', h('a', { href: url, class: 'mono', id: 'jwks-link' }, url));
  }

  // ---- endpoint settings (docs/endpoint-settings.md) ----------------------
  // Rate limit, timeout and custom headers. Header values are write-only:
  // the API answers them masked, so the form shows them masked and sends a
  // header only when a new value is typed.

  function settingsFacts(ep) {
    const s = ep.settings || { headers: {} };
    const names = Object.keys(s.headers).sort();
    return [
      fact('Rate limit', s.rate_limit ? s.rate_limit + ' a second' : "The account's"),
      fact('Timeout', s.timeout_seconds ? s.timeout_seconds + ' s' : 'Default'),
      fact('Custom headers', names.length
        ? h('ul', { class: 'plain', id: 'custom-headers' }, names.map((n) => h('li', { class: 'mono' }, n + ': ' + s.headers[n])))
        : 'None'),
      s.oauth2 ? fact('OAuth2', h('span', { class: 'mono', id: 'oauth2-fact' }, s.oauth2.client_id + ' at ' + s.oauth2.token_url + ' (' + s.oauth2.auth_method + ')')) : null,
      s.tls ? fact('Mutual TLS', h('span', { id: 'tls-fact' }, [s.tls.client_cert ? 'client certificate' : null, s.tls.ca_bundle ? 'own CA bundle' : null].filter(Boolean).join(', '))) : null,
      s.filter ? fact('Content filter', h('pre', { class: 'doc', id: 'filter-fact' }, pretty(s.filter))) : null,
    ];
  }

  // The receiver's auth (OAuth2 client credentials, mutual TLS) and the
  // content filter. Secrets (client secret, private keys) are write-only:
  // sent only when typed; left empty, the stored one is kept.
  const AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'private_key_jwt'];

  function authFields(s) {
    const o = s.oauth2 || {};
    const text = (id, value, extra) => h('input', { type: 'text', id, autocomplete: 'off', value: value || '', ...extra });
    const area = (id, value, extra) => h('textarea', { id, rows: '4', spellcheck: 'false', autocomplete: 'off', ...extra }, value || '');
    const f = {
      tokenURL: h('input', { type: 'url', id: 'f-oauth-url', autocomplete: 'off', value: o.token_url || '', placeholder: 'https://auth.example.com/oauth/token' }),
      clientID: text('f-oauth-id', o.client_id, { maxlength: '256' }),
      method: h('select', { id: 'f-oauth-method' }, AUTH_METHODS.map((m) => h('option', { value: m, selected: m === (o.auth_method || 'client_secret_basic') }, m))),
      secret: h('input', { type: 'password', id: 'f-oauth-secret', autocomplete: 'new-password', maxlength: '1024', placeholder: o.client_secret ? 'saved (' + o.client_secret + '): leave empty to keep' : '' }),
      key: area('f-oauth-key', '', { placeholder: o.private_key ? 'saved: leave empty to keep' : '-----BEGIN PRIVATE KEY-----' }),
      scopes: text('f-oauth-scopes', (o.scopes || []).join(' '), { placeholder: 'hooks.write' }),
      audience: text('f-oauth-aud', o.audience, { maxlength: '1024' }),
      dropOAuth: h('input', { type: 'checkbox', id: 'f-oauth-remove' }),
      cert: area('f-tls-cert', s.tls && s.tls.client_cert, { placeholder: '-----BEGIN CERTIFICATE-----' }),
      tlsKey: area('f-tls-key', '', { placeholder: s.tls && s.tls.client_key ? 'saved: leave empty to keep' : '-----BEGIN PRIVATE KEY-----' }),
      ca: area('f-tls-ca', s.tls && s.tls.ca_bundle, { placeholder: '-----BEGIN CERTIFICATE-----' }),
      dropTLS: h('input', { type: 'checkbox', id: 'f-tls-remove' }),
    };
    const row = (input, label, hint) => h('div', {}, h('label', { for: input.id }, label, hint ? [' ', h('span', { class: 'hint' }, hint)] : null), input);
    const fields = [
      h('fieldset', { class: 'settings', id: 'oauth2-fields' }, h('legend', {}, 'OAuth2 client credentials'),
        h('p', { class: 'hint' }, 'Before each attempt a bearer token is fetched from the token URL (cached until it expires).'),
        row(f.tokenURL, 'Token URL'), h('div', { class: 'row' }, row(f.clientID, 'Client ID'), row(f.method, 'Auth method')),
        row(f.secret, 'Client secret', '(write-only)'), row(f.key, 'Private key', '(private_key_jwt; PEM, write-only)'),
        h('div', { class: 'row' }, row(f.scopes, 'Scopes', '(space separated)'), row(f.audience, 'Audience', '(optional)')),
        o.token_url ? h('div', {}, f.dropOAuth, h('label', { for: f.dropOAuth.id, class: 'inline' }, 'Remove OAuth2')) : null),
      h('fieldset', { class: 'settings', id: 'tls-fields' }, h('legend', {}, 'Mutual TLS'),
        row(f.cert, 'Client certificate', '(PEM)'), row(f.tlsKey, 'Client key', '(PEM, write-only)'),
        row(f.ca, 'CA bundle', '(PEM; trusted instead of the public roots)'),
        s.tls ? h('div', {}, f.dropTLS, h('label', { for: f.dropTLS.id, class: 'inline' }, 'Remove mutual TLS')) : null),
    ];
    // read adds the oauth2 and tls changes to out (and their resets).
    function read(out, reset, creating) {
      const url = f.tokenURL.value.trim();
      const scopes = f.scopes.value.split(/\s+/).filter(Boolean);
      if (f.dropOAuth.checked) reset.push('oauth2');
      else if (url) {
        const next = { token_url: url, client_id: f.clientID.value.trim(), auth_method: f.method.value, scopes, audience: f.audience.value.trim() };
        if (f.secret.value) next.client_secret = f.secret.value;
        if (f.key.value.trim()) next.private_key = f.key.value;
        const same = !creating && o.token_url === url && o.client_id === next.client_id && (o.auth_method || 'client_secret_basic') === next.auth_method &&
          (o.scopes || []).join(' ') === scopes.join(' ') && (o.audience || '') === next.audience && !next.client_secret && !next.private_key;
        if (!same) out.oauth2 = next;
      } else if (o.token_url) reset.push('oauth2');
      const cert = f.cert.value.trim(), ca = f.ca.value.trim();
      if (f.dropTLS.checked) reset.push('tls');
      else if (cert || ca) {
        const cur = s.tls || {};
        const next = {};
        if (cert) next.client_cert = f.cert.value;
        if (f.tlsKey.value.trim()) next.client_key = f.tlsKey.value;
        if (ca) next.ca_bundle = f.ca.value;
        if (creating || next.client_key || (cur.client_cert || '').trim() !== cert || (cur.ca_bundle || '').trim() !== ca) out.tls = next;
      } else if (s.tls) reset.push('tls');
    }
    return { fields, read };
  }

  // filterFields: the content filter as JSON, and a test of it against a
  // catalog type's example (POST /v1/filters/test).
  function filterFields(s, types) {
    const current = s.filter ? pretty(s.filter) : '';
    const input = h('textarea', { id: 'f-filter', rows: '5', spellcheck: 'false' }, current);
    const examples = types.filter((t) => t.example !== undefined);
    const pick = h('select', { id: 'f-filter-type' }, examples.map((t) => h('option', { value: t.name }, t.name)));
    const result = h('p', { id: 'filter-result', role: 'status' });
    const parse = () => {
      try { return JSON.parse(input.value); } catch (e) { throw new Error('settings.filter: not JSON (' + e.message + ')'); }
    };
    const test = h('button', { type: 'button', id: 'f-filter-test', onclick: action(async () => {
      result.textContent = '';
      const r = await call('POST', 'filters/test', { filter: parse(), event_type: pick.value });
      result.textContent = r.matches ? 'The ' + pick.value + ' example matches: it would be delivered.' : 'The ' + pick.value + ' example does not match: it would not be delivered.';
      result.className = r.matches ? 'badge ok' : 'badge failing';
    }) }, 'Test the filter');
    const fields = h('fieldset', { class: 'settings', id: 'filter-fields' }, h('legend', {}, 'Content filter'),
      h('label', { for: 'f-filter' }, 'Filter ', h('span', { class: 'hint' }, '(JSON; only events whose body matches are delivered; empty: every event)')), input,
      examples.length ? h('div', { class: 'row' }, h('label', { for: 'f-filter-type' }, 'Catalog example'), pick, test) : null,
      result);
    function read(out, reset) {
      const v = input.value.trim();
      if (v === current.trim()) return;
      if (v === '') reset.push('filter');
      else out.filter = parse();
    }
    return { fields, read };
  }

  function settingsFields(ep, types) {
    const s = ep ? ep.settings : { headers: {} };
    const auth = ep && ep.aws ? { fields: null, read: () => {} } : authFields(s); // IAM authenticates AWS targets
    const filt = filterFields(s, types);
    const rate = h('input', { type: 'number', id: 'f-rate', min: '0', step: 'any', inputmode: 'decimal', value: s.rate_limit || '', placeholder: "the account's" });
    const timeout = h('input', { type: 'number', id: 'f-timeout', min: '1', max: '10', step: '1', value: s.timeout_seconds || '', placeholder: 'default' });
    const removals = [];
    const existing = Object.keys(s.headers).sort().map((name) => {
      const box = h('input', { type: 'checkbox', id: 'f-rm-' + name, value: name });
      removals.push(box);
      return h('li', {}, h('span', { class: 'mono' }, name + ': ' + s.headers[name]), ' ', box, h('label', { for: 'f-rm-' + name }, 'Remove ' + name));
    });
    const rows = h('div', { class: 'header-rows' });
    const added = [];
    function addRow() {
      const i = added.length;
      const name = h('input', { type: 'text', id: 'f-hname-' + i, autocomplete: 'off', placeholder: 'Authorization', maxlength: '64' });
      const value = h('input', { type: 'password', id: 'f-hvalue-' + i, autocomplete: 'new-password', maxlength: '1024' });
      added.push({ name, value });
      rows.append(h('div', { class: 'row' },
        h('div', {}, h('label', { for: name.id }, 'Header name ' + (i + 1)), name),
        h('div', {}, h('label', { for: value.id }, 'Header value ' + (i + 1)), value)));
    }
    addRow();
    const fields = h('fieldset', { class: 'settings' },
      h('legend', {}, 'Delivery settings'),
      h('div', { class: 'row' },
        h('div', {}, h('label', { for: 'f-rate' }, 'Rate limit ', h('span', { class: 'hint' }, '(deliveries a second; empty: the account\'s)')), rate),
        h('div', {}, h('label', { for: 'f-timeout' }, 'Timeout ', h('span', { class: 'hint' }, '(1 to 10 s; empty: default)')), timeout)),
      h('p', { class: 'hint' }, 'Custom headers go on every attempt (at most 10). Values are write-only: shown masked once saved.'),
      existing.length ? h('ul', { class: 'plain' }, existing) : null,
      rows,
      h('button', { type: 'button', onclick: () => { if (added.length < 10) addRow(); } }, 'Add another header'),
      auth.fields, filt.fields);
    // read returns the settings for POST (ep null) or the change for PATCH;
    // null when there is nothing to send.
    function read() {
      const out = {};
      const headers = {};
      for (const r of added) {
        const n = r.name.value.trim();
        if (n) headers[n] = r.value.value;
      }
      if (Object.keys(headers).length) out.headers = headers;
      const num = (input) => (input.value.trim() === '' ? null : Number(input.value));
      const newRate = num(rate), newTimeout = num(timeout);
      const reset = [];
      auth.read(out, reset, !ep);
      filt.read(out, reset);
      if (!ep) {
        if (newRate !== null) out.rate_limit = newRate;
        if (newTimeout !== null) out.timeout_seconds = newTimeout;
        return Object.keys(out).length ? out : null;
      }
      if (newRate === null && s.rate_limit) reset.push('rate_limit');
      if (newRate !== null && newRate !== s.rate_limit) out.rate_limit = newRate;
      if (newTimeout === null && s.timeout_seconds) reset.push('timeout_seconds');
      if (newTimeout !== null && newTimeout !== s.timeout_seconds) out.timeout_seconds = newTimeout;
      const remove = removals.filter((b) => b.checked).map((b) => b.value);
      if (reset.length) out.reset = reset;
      if (remove.length) out.remove_headers = remove;
      return Object.keys(out).length ? out : null;
    }
    return { fields, read };
  }

  function endpointForm(ep, types) {
    const url = h('input', { type: 'url', id: 'f-url', name: 'url', required: true, value: ep ? ep.url : '', placeholder: 'https://example.com/webhooks', autocomplete: 'off' });
    const desc = h('input', { type: 'text', id: 'f-desc', name: 'description', maxlength: '500', value: ep ? ep.description : '' });
    // With a catalog, subscriptions are chosen from it; without one, typed.
    const picker = types.length ? typePicker(types, ep ? ep.event_types : []) : null;
    const typed = picker ? null : h('input', { type: 'text', id: 'f-types', name: 'event_types', value: ep ? ep.event_types.join(', ') : '', placeholder: 'payout.fulfilled, payout.*' });
    const current = ep ? ep.signature_scheme : 'v1';
    const scheme = h('select', { id: 'f-scheme', name: 'signature_scheme' },
      Object.entries(SCHEMES).map(([v, label]) => h('option', { value: v, selected: v === current }, label)));
    const settings = settingsFields(ep, types);
    // An AWS endpoint's target and role are changed through the API (they
    // are checked by assuming the role); the form edits the rest.
    const aws = ep && ep.aws;
    const form = h('form', { novalidate: true },
      aws ? [h('p', { class: 'mono' }, aws.target_arn)] : [h('label', { for: 'f-url' }, 'Endpoint URL'), url],
      h('label', { for: 'f-desc' }, 'Description ', h('span', { class: 'hint' }, '(optional)')), desc,
      picker ? picker.fields
        : [h('label', { for: 'f-types' }, 'Event types ', h('span', { class: 'hint' }, '(comma separated; payout.* for a prefix; empty for every event)')), typed],
      h('label', { for: 'f-scheme' }, 'Signatures ', h('span', { class: 'hint' }, '(webhook-signature; v1a verifies with public keys only)')), scheme,
      settings.fields,
      h('div', { class: 'actions row' },
        h('button', { type: 'submit', class: 'primary' }, ep ? 'Save changes' : 'Add endpoint'),
        h('a', { class: 'button', href: ep ? '#/endpoints/' + ep.id : '#/endpoints' }, 'Cancel')));
    form.addEventListener('submit', action(async () => {
      const body = {
        ...(aws ? {} : { url: url.value.trim() }), description: desc.value.trim(),
        event_types: picker ? picker.read() : typed.value.split(',').map((s) => s.trim()).filter(Boolean),
        signature_scheme: scheme.value,
      };
      const changed = settings.read();
      if (changed) body.settings = changed;
      if (ep) {
        await call('PATCH', 'endpoints/' + ep.id, body);
        location.hash = '#/endpoints/' + ep.id;
        notice('Endpoint saved.');
        return;
      }
      const created = await call('POST', 'endpoints', body);
      show(h('p', { class: 'crumbs' }, h('a', { href: '#/endpoints' }, 'Endpoints')),
        h('h1', {}, 'Endpoint added'), h('p', { class: 'mono' }, created.url),
        secretPanel('Signing secret', created.secret),
        h('a', { class: 'button primary', href: '#/endpoints/' + created.id }, 'Go to the endpoint'));
    }));
    return form;
  }

  async function newEndpointView() {
    const types = await catalog();
    show(h('p', { class: 'crumbs' }, h('a', { href: '#/endpoints' }, 'Endpoints')), h('h1', {}, 'Add an endpoint'), endpointForm(null, types));
  }

  async function editEndpointView(id) {
    const [ep, types] = await Promise.all([call('GET', 'endpoints/' + id), catalog()]);
    show(h('p', { class: 'crumbs' }, h('a', { href: '#/endpoints' }, 'Endpoints'), ' / ', h('a', { href: '#/endpoints/' + id }, 'Endpoint')),
      h('h1', {}, 'Edit endpoint'), endpointForm(ep, types));
  }

  function deliveriesTable(rows) {
    if (!rows.length) return h('p', { class: 'muted', id: 'no-deliveries' }, 'No deliveries here yet.');
    return h('div', { class: 'table-wrap' }, h('table', { id: 'deliveries' },
      h('caption', { class: 'skip' }, 'Deliveries, newest first'),
      h('thead', {}, h('tr', {},
        h('th', { scope: 'col' }, 'Event'), h('th', { scope: 'col' }, 'Status'),
        h('th', { scope: 'col', class: 'hide-narrow' }, 'Attempts'), h('th', { scope: 'col' }, 'Last response'),
        h('th', { scope: 'col', class: 'hide-narrow' }, 'Next attempt'), h('th', { scope: 'col', class: 'hide-narrow' }, 'Created'))),
      h('tbody', {}, rows.map((d) => h('tr', {},
        h('td', {}, h('a', { href: '#/deliveries/' + d.id }, d.event)),
        h('td', {}, statusBadge(d.status)),
        h('td', { class: 'hide-narrow' }, String(d.attempt_count)),
        h('td', {}, d.last_status ? 'HTTP ' + d.last_status : d.last_error || '—'),
        h('td', { class: 'hide-narrow' }, d.next_attempt_at ? when(d.next_attempt_at) : '—'),
        h('td', { class: 'hide-narrow' }, when(d.created_at)))))));
  }

  async function endpointView(id, query) {
    const status = query.get('status') || '';
    const cursor = query.get('cursor') || '';
    const [ep, page] = await Promise.all([
      call('GET', 'endpoints/' + id),
      call('GET', 'endpoints/' + id + '/deliveries?limit=20' + (status ? '&status=' + status : '') + (cursor ? '&cursor=' + encodeURIComponent(cursor) : '')),
    ]);
    const success = await lastSuccess(ep).catch(() => '');
    const jwks = await signingKeysFact(ep).catch(() => null);
    const win = query.get('window') === 'week' ? 'week' : 'day';
    const st = await statsOf(id, win);
    const here = (q) => '#/endpoints/' + id + (q.toString() ? '?' + q : '');

    const filter = h('select', { id: 'status-filter' },
      ['', 'pending', 'delivered', 'failed'].map((s) => h('option', { value: s, selected: s === status }, s ? s[0].toUpperCase() + s.slice(1) : 'All')));
    filter.addEventListener('change', () => { location.hash = here(new URLSearchParams(filter.value ? { status: filter.value } : {})); });

    const actions = readOnly ? null : h('div', { class: 'row', role: 'group', 'aria-label': 'Endpoint actions' },
      h('button', { type: 'button', onclick: action(async () => {
        const res = await call('POST', 'endpoints/' + id + '/test-event');
        notice('Test event sent: ' + res.id);
        await endpointView(id, query);
        notice('Test event sent: ' + res.id);
      }), disabled: ep.disabled }, 'Send test event'),
      h('a', { class: 'button', href: '#/endpoints/' + id + '/edit' }, 'Edit'),
      h('button', { type: 'button', onclick: action(async () => {
        await call('PATCH', 'endpoints/' + id, { disabled: !ep.disabled });
        await endpointView(id, query);
        notice(ep.disabled ? 'Endpoint enabled.' : 'Endpoint disabled: its pending deliveries were stopped.');
      }) }, ep.disabled ? 'Enable' : 'Disable'),
      h('button', { type: 'button', class: 'danger', onclick: action(async () => {
        if (!confirm('Delete this endpoint? Its pending deliveries stop; the log stays readable.')) return;
        await call('DELETE', 'endpoints/' + id);
        location.hash = '#/endpoints';
        notice('Endpoint deleted.');
      }) }, 'Delete'));

    const rotateGrace = h('select', { id: 'rotate-grace' },
      h('option', { value: '0' }, 'Stop the old secret now'), h('option', { value: '3600' }, '1 hour'),
      h('option', { value: '86400', selected: true }, '24 hours'));
    const rotated = h('div', {});
    // An AWS endpoint's messages carry no signature (IAM authenticates the
    // write, docs/destinations.md): no secret to rotate.
    const rotate = readOnly || ep.aws ? null : h('section', { class: 'panel soft', 'aria-labelledby': 'rotate-title' },
      h('h2', { id: 'rotate-title' }, 'Signing secret'),
      h('div', { class: 'row' },
        h('label', { for: 'rotate-grace' }, 'Old secret keeps signing for'), rotateGrace,
        h('button', { type: 'button', onclick: action(async () => {
          // At most two secrets sign: while an older one still does, the API
          // answers 409, and stopping it now is the customer's call.
          const body = { expire_previous_after_seconds: Number(rotateGrace.value) };
          const res = await call('POST', 'endpoints/' + id + '/rotate-secret', body).catch((e) => {
            if (e.code !== 'previous_secret_live' || !confirm('An older secret still signs. Stop it now and rotate?')) throw e;
            return call('POST', 'endpoints/' + id + '/rotate-secret', { ...body, expire_previous_now: true });
          });
          rotated.replaceChildren(secretPanel('New signing secret', res.secret,
            res.previous_secret_expires_at ? 'The previous secret also signs until ' + when(res.previous_secret_expires_at) + '.' : 'The previous secret no longer signs.'));
          rotated.querySelector('code').focus();
        }) }, 'Rotate secret')),
      rotated);

    const since = h('input', { type: 'datetime-local', id: 'recover-since', required: true, step: '1' });
    const until = h('input', { type: 'datetime-local', id: 'recover-until', step: '1' });
    const recover = readOnly ? null : h('form', { class: 'panel soft', 'aria-labelledby': 'recover-title' },
      h('h2', { id: 'recover-title' }, 'Recover failed deliveries'),
      h('p', { class: 'muted' }, 'Give every failed delivery created in the window a fresh series of attempts.'),
      h('div', { class: 'row' },
        h('div', {}, h('label', { for: 'recover-since' }, 'From'), since),
        h('div', {}, h('label', { for: 'recover-until' }, 'Until ', h('span', { class: 'hint' }, '(empty: now)')), until)),
      h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Recover')));
    if (recover) {
      recover.addEventListener('submit', action(async () => {
        if (!since.value) throw new Error('Choose when the window starts.');
        const body = { since: new Date(since.value).toISOString() };
        if (until.value) body.until = new Date(until.value).toISOString();
        const res = await call('POST', 'endpoints/' + id + '/recover', body);
        notice(res.recovered + ' failed deliveries recovered' + (res.more ? '; recover again for the rest.' : '.'));
      }));
    }

    // Replay: the events of a window this endpoint never had a delivery of
    // (it was added or re-filtered after them). Each call does at most 100;
    // the cursor goes on from where the last one stopped, for the same window.
    const replaySince = h('input', { type: 'datetime-local', id: 'replay-since', required: true, step: '1' });
    let replayCursor = null, replayWindow = '';
    const replay = readOnly ? null : h('form', { class: 'panel soft', 'aria-labelledby': 'replay-title' },
      h('h2', { id: 'replay-title' }, 'Replay missed events'),
      h('p', { class: 'muted' }, 'Deliver the events since this time that match this endpoint and never had a delivery to it (at most 30 days back).'),
      h('div', { class: 'row' }, h('div', {}, h('label', { for: 'replay-since' }, 'Since'), replaySince)),
      h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Replay')));
    if (replay) {
      replay.addEventListener('submit', action(async () => {
        if (!replaySince.value) throw new Error('Choose since when to replay.');
        const body = { since: new Date(replaySince.value).toISOString() };
        if (replayCursor && replayWindow === body.since) body.cursor = replayCursor;
        const res = await call('POST', 'endpoints/' + id + '/replay', body);
        replayCursor = res.more ? res.next_cursor : null;
        replayWindow = body.since;
        notice(res.replayed + (res.replayed === 1 ? ' missed event' : ' missed events') + ' replayed' +
          (res.more ? '; replay again for the rest.' : '.'));
      }));
    }

    const next = new URLSearchParams(status ? { status } : {});
    if (page.next_cursor) next.set('cursor', page.next_cursor);
    const pager = h('div', { class: 'row pager' },
      cursor ? h('a', { class: 'button', href: here(new URLSearchParams(status ? { status } : {})) }, 'Newest') : null,
      page.next_cursor ? h('a', { class: 'button', href: here(next), id: 'older' }, 'Older deliveries') : null);

    show(
      h('p', { class: 'crumbs' }, h('a', { href: '#/endpoints' }, 'Endpoints')),
      h('div', { class: 'row spread' }, h('h1', { class: 'mono' }, target(ep)), health(ep)),
      ep.description ? h('p', { class: 'muted' }, ep.description) : null,
      h('dl', { class: 'facts' },
        fact('Last success', when(success)),
        fact('Failing since', when(ep.failing_since)),
        paused(ep),
        ...destinationFacts(ep),
        fact('Events', ep.event_types.length ? ep.event_types.join(', ') : 'All events'),
        ep.aws ? null : fact('Signatures', SCHEMES[ep.signature_scheme] || ep.signature_scheme),
        jwks,
        fact('Created', when(ep.created_at)),
        ...settingsFacts(ep),
        ep.disabled ? fact('Disabled because', ep.disabled_reason || 'disabled by you') : null),
      actions ? h('div', { class: 'panel' }, actions) : null,
      healthFacts(ep),
      statsPanel(st, win, (w) => {
        const q = new URLSearchParams(query);
        q.set('window', w);
        location.hash = here(q);
      }),
      h('div', { class: 'row spread' }, h('h2', {}, 'Deliveries'),
        h('div', { class: 'row' }, h('label', { for: 'status-filter' }, 'Status'), filter)),
      deliveriesTable(page.data), pager, rotate, recover, replay);
  }

  // ---- a delivery --------------------------------------------------------

  async function deliveryView(id) {
    const d = await call('GET', 'deliveries/' + id);
    const ev = await call('GET', 'events/' + d.event_id).catch(() => null);
    // The API shows the newest attempts, newest first, and a cursor for the
    // older ones: "Older attempts" fetches them a page at a time.
    const attempts = d.attempts || [];
    let older = d.attempts_next_cursor || '';
    const attemptRow = (a) => h('tr', {},
      h('td', {}, when(a.started_at)),
      h('td', {}, a.kind === 'manual' ? 'Resend' : (a.series > 1 ? 'Series ' + a.series + ' ' : '') + '#' + a.number + (a.kind === 'interrupted' ? ' (interrupted)' : '')),
      h('td', {}, a.status_code ? 'HTTP ' + a.status_code : (a.error_class || a.outcome)),
      h('td', { class: 'hide-narrow' }, a.duration_ms + ' ms'),
      h('td', {}, a.response_body ? h('pre', {}, a.response_body + (a.response_truncated ? '…' : '')) : h('span', { class: 'muted' }, a.error || '—')));
    const rows = h('tbody', {}, attempts.map(attemptRow));
    // Each series apart (the automatic one, each redrive or recover that
    // restarted it, the manual resends), with its own count and when it
    // began, so two "#1" rows read as what they are.
    const seriesOf = (list) => {
      const by = new Map();
      for (const a of list) {
        const k = a.kind === 'manual' ? 'resent' : 'series-' + a.series;
        const s = by.get(k) || { key: k, series: a.series, manual: a.kind === 'manual', count: 0, began: a.started_at };
        s.count++;
        if (a.started_at < s.began) s.began = a.started_at;
        by.set(k, s);
      }
      return [...by.values()].sort((x, y) => (x.began < y.began ? -1 : 1));
    };
    const seriesItem = (s) => h('li', { 'data-series': s.key },
      s.manual ? 'Resent' : s.series === 1 ? 'Automatic' : 'Series ' + s.series + ' (redriven)',
      ': ' + s.count + (s.count === 1 ? ' attempt' : ' attempts') + (older ? ' shown' : '') + ', began ' + when(s.began));
    const seriesList = h('ul', { id: 'series', class: 'muted' }, seriesOf(attempts).map(seriesItem));
    const shown = [...attempts];
    const more = older ? h('div', { class: 'row pager' }, h('button', { type: 'button', id: 'older-attempts', onclick: action(async () => {
      const page = await call('GET', 'deliveries/' + id + '/attempts?limit=100&cursor=' + encodeURIComponent(older));
      rows.append(...page.data.map(attemptRow));
      shown.push(...page.data);
      older = page.next_cursor;
      seriesList.replaceChildren(...seriesOf(shown).map(seriesItem));
      if (!older) more.remove();
    }) }, 'Older attempts')) : null;
    const resend = readOnly ? null : h('button', { type: 'button', class: 'primary', onclick: action(async () => {
      const res = await call('POST', 'deliveries/' + id + '/resend');
      notice('Resend queued (attempt ' + res.attempt_id + ').');
    }) }, 'Resend now');
    show(
      h('p', { class: 'crumbs' }, h('a', { href: '#/endpoints' }, 'Endpoints'), ' / ', h('a', { href: '#/endpoints/' + d.endpoint_id }, 'Endpoint')),
      h('div', { class: 'row spread' }, h('h1', {}, d.event), statusBadge(d.status)),
      h('dl', { class: 'facts' },
        fact('Delivery', h('span', { class: 'mono' }, d.id)),
        fact('Event', h('span', { class: 'mono' }, d.event_id)),
        fact('Attempts', String(d.attempt_count)),
        d.next_attempt_at ? fact('Next attempt', h('span', { id: 'next-attempt' }, when(d.next_attempt_at) + ' (' + relative(d.next_attempt_at) + ')')) : null,
        d.delivered_at ? fact('Delivered', when(d.delivered_at)) : null,
        d.failed_at ? fact('Failed', when(d.failed_at) + (d.fail_reason ? ' (' + d.fail_reason.replace(/_/g, ' ') + ')' : '')) : null,
        fact('Created', when(d.created_at))),
      resend ? h('div', { class: 'row panel soft' }, resend, h('span', { class: 'muted' }, 'One extra attempt now; automatic retries carry on.')) : null,
      h('h2', {}, 'Attempts'),
      attempts.length ? seriesList : null,
      attempts.length ? h('div', { class: 'table-wrap' }, h('table', { id: 'attempts' },
        h('thead', {}, h('tr', {},
          h('th', { scope: 'col' }, 'Time'), h('th', { scope: 'col' }, 'Attempt'), h('th', { scope: 'col' }, 'Result'),
          h('th', { scope: 'col', class: 'hide-narrow' }, 'Duration'), h('th', { scope: 'col' }, 'Response'))),
        rows)) : h('p', { class: 'muted' }, 'No attempt yet.'),
      more,
      ev ? h('h2', {}, 'Payload') : null,
      ev ? h('pre', { class: 'panel soft payload', id: 'payload' }, JSON.stringify(ev.body, null, 2)) : null);
  }

  // ---- routing -----------------------------------------------------------

  async function route() {
    showError(null);
    const [path, qs] = location.hash.replace(/^#/, '').split('?');
    const query = new URLSearchParams(qs || '');
    const parts = path.split('/').filter(Boolean);
    try {
      if (parts[0] === 'endpoints' && parts[1] && parts[2] === 'edit') return await editEndpointView(parts[1]);
      if (parts[0] === 'endpoints' && parts[1]) return await endpointView(parts[1], query);
      if (parts[0] === 'deliveries' && parts[1]) return await deliveryView(parts[1]);
      if (parts[0] === 'new' && !readOnly) return await newEndpointView();
      if (parts[0] === 'event-types') return await eventTypesView();
      if (parts[0] === 'events') return await eventsView(query);
      return await endpointsView();
    } catch (e) {
      if (e.status === 404) return show(h('h1', {}, 'Not found'), h('p', {}, h('a', { href: '#/endpoints' }, 'Back to endpoints')));
      showError(e);
    }
  }

  if (!token) return ended();
  document.getElementById('mode').hidden = !readOnly;
  const signout = document.getElementById('signout');
  signout.hidden = false;
  signout.addEventListener('click', action(async () => {
    await call('DELETE', 'portal/sessions/current').catch(() => {});
    ended();
  }));
  window.addEventListener('hashchange', route);
  route();
})();
