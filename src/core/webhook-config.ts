// SVC_WEBHOOK_URLS and SVC_WEBHOOK_SECRET (docs/settlement.md "Webhooks"): where events are POSTed and the
// secret their signatures are made with. Both or neither; a URL is http(s) with a host, the secret at
// least 32 characters (a receiver's own check is only as strong as it).
export interface WebhookConfig {
  urls: string[];
  /** the HMAC-SHA256 key of Svc-Signature: never logged, never sent */
  secret: string;
}

const MIN_SECRET = 32;

export function webhookConfig(env: NodeJS.ProcessEnv): WebhookConfig | null {
  const urls = (env.SVC_WEBHOOK_URLS ?? '').split(',').map((u) => u.trim()).filter(Boolean);
  const secret = env.SVC_WEBHOOK_SECRET ?? '';
  if (!urls.length && !secret) return null;
  if (!urls.length) throw new Error('SVC_WEBHOOK_SECRET is set but SVC_WEBHOOK_URLS is not: set both or neither');
  if (secret.length < MIN_SECRET) {
    throw new Error(`SVC_WEBHOOK_SECRET must be at least ${MIN_SECRET} characters (e.g. openssl rand -hex 32)`);
  }
  for (const u of urls) {
    let url: URL;
    try {
      url = new URL(u);
    } catch {
      throw new Error(`SVC_WEBHOOK_URLS: not a URL: ${u}`);
    }
    if ((url.protocol !== 'https:' && url.protocol !== 'http:') || !url.hostname) {
      throw new Error(`SVC_WEBHOOK_URLS: an http(s) URL with a host, not ${u}`);
    }
  }
  return { urls: [...new Set(urls)], secret };
}
