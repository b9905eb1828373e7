// Compiled by `tsc -p tsconfig.json` (npm test): the declarations describe the API as it is used.
import { Webhook, JwksCache, verifyGifqSignature, verifyStandard, verifyStandardV1a, parseJwks, WebhookVerificationError } from '@gifq/webhooks';
import type { ErrorKind, Scheme } from '@gifq/webhooks';

const wh = new Webhook({ secrets: ['whsec_old', 'whsec_new'], jwksUrl: 'https://api.example/v1/accounts/acct_1/jwks.json' });
export async function handle(body: Buffer, headers: Record<string, string | string[] | undefined>): Promise<number> {
  try {
    const scheme: Scheme = await wh.verify(body, headers);
    return scheme === 'standard-webhooks-v1a' ? 204 : 200;
  } catch (e) {
    if (e instanceof WebhookVerificationError) {
      const k: ErrorKind = e.kind;
      return k === 'too_old' ? 400 : 401;
    }
    throw e;
  }
}
verifyGifqSignature('{}', 't=1,v1=00', ['whsec_x'], { toleranceSeconds: 600 });
verifyStandard(new Uint8Array(), new Headers(), ['whsec_x'], { now: () => new Date() });
verifyStandardV1a('{}', {}, parseJwks({ keys: [] }));
void new JwksCache(new URL('https://api.example/jwks.json'), { refetchIntervalMs: 60_000 }).keys();
