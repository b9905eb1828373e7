// @gifq/webhooks/client: the producer API (docs/openapi.yaml) over fetch, typed by
// openapi.d.ts (generated: make sdk-clients). No dependencies.

/** An answer other than 2xx; `code` and `message` are the API's {"error":{...}}. */
export class ApiError extends Error {
  constructor(status, body) {
    const err = body && typeof body === 'object' ? body.error : undefined;
    super(`gifq-webhooks API: HTTP ${status}${err ? `: ${err.code}: ${err.message}` : ''}`);
    this.name = 'ApiError';
    this.status = status;
    this.code = err?.code;
    this.body = body;
  }
}

export function createClient({ baseUrl, apiKey, fetch = globalThis.fetch, headers = {} } = {}) {
  if (!baseUrl) throw new TypeError('createClient needs a baseUrl');
  const base = String(baseUrl).replace(/\/+$/, '');

  async function request(method, path, { params = {}, body, headers: extra, signal } = {}) {
    const url = new URL(
      base +
        path.replace(/\{([^}]+)\}/g, (_, name) => {
          const v = params.path?.[name];
          if (v === undefined) throw new TypeError(`${path}: no value for {${name}}`);
          return encodeURIComponent(String(v));
        }),
    );
    for (const [k, v] of Object.entries(params.query ?? {})) {
      if (v === undefined || v === null) continue;
      for (const item of Array.isArray(v) ? v : [v]) url.searchParams.append(k, String(item));
    }
    const h = { accept: 'application/json', ...headers };
    if (apiKey) h.authorization = `Bearer ${apiKey}`;
    for (const [k, v] of Object.entries(params.header ?? {})) if (v !== undefined) h[k] = String(v);
    if (body !== undefined) h['content-type'] = 'application/json';
    Object.assign(h, extra);
    const res = await fetch(url, { method, headers: h, body: body === undefined ? undefined : JSON.stringify(body), signal });
    const text = await res.text();
    let data;
    if (text) {
      try {
        data = JSON.parse(text);
      } catch {
        data = text;
      }
    }
    if (!res.ok) throw new ApiError(res.status, data);
    return data;
  }

  const call = (method) => (path, init) => request(method, path, init);
  return { request, GET: call('GET'), POST: call('POST'), PUT: call('PUT'), PATCH: call('PATCH'), DELETE: call('DELETE') };
}
