// Compiled by `tsc -p tsconfig.json` (npm test): the client is typed by docs/openapi.yaml.
import { createClient, ApiError } from '@gifq/webhooks/client';

const api = createClient({ baseUrl: 'http://127.0.0.1:8080', apiKey: 'gk_...' });

export async function producer(): Promise<string> {
  const ep = await api.POST('/v1/endpoints', { body: { url: 'https://example.com/hook', signature_scheme: 'v1a' } });
  const secret: string | undefined = ep.secret; // allOf's required [secret] is not carried into the type
  const ev = await api.POST('/v1/events', { body: { event: 'payout.fulfilled' }, params: { header: { 'Idempotency-Key': 'k1' } } });
  const firstDelivery: string = ev.deliveries[0].id;
  const got = await api.GET('/v1/endpoints/{id}', { params: { path: { id: ep.id } } });
  const url: string = got.url;
  // @ts-expect-error: no such path
  await api.GET('/v1/nowhere');
  // @ts-expect-error: the body's url must be a string
  await api.POST('/v1/endpoints', { body: { url: 42 } });
  try {
    await api.DELETE('/v1/endpoints/{id}', { params: { path: { id: ep.id } } });
  } catch (e) {
    if (e instanceof ApiError && e.code === 'not_found') return url;
  }
  return (secret ?? "") + firstDelivery;
}
