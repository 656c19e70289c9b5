import * as oidc from 'openid-client'
import type { CheckContext } from './check.ts'
import type { TargetClient } from './target.ts'

/**
 * An openid-client Configuration for one of the target's clients (client_secret_post). Its
 * requests go through the check's recorder, which trusts the target's CA with TLS checks on.
 */
export async function oidcConfig(
  ctx: Pick<CheckContext, 'target' | 'http'>,
  client: TargetClient,
): Promise<oidc.Configuration> {
  const customFetch: oidc.CustomFetch = async (url, options) => {
    const res = await ctx.http.request(url, {
      method: options.method,
      headers: Object.fromEntries(new Headers(options.headers as HeadersInit)),
      ...(options.body !== undefined && options.body !== null
        ? { body: bodyText(options.body) }
        : {}),
    })
    return new Response(res.status === 204 || res.status === 304 ? null : res.text, {
      status: res.status,
      headers: res.headers,
    })
  }
  return oidc.discovery(
    new URL(ctx.target.baseUrl),
    client.id,
    undefined,
    oidc.ClientSecretPost(client.secret),
    {
      [oidc.customFetch]: customFetch,
    },
  )
}

function bodyText(body: unknown): string {
  if (typeof body === 'string') return body
  if (body instanceof URLSearchParams) return body.toString()
  if (body instanceof Uint8Array || body instanceof ArrayBuffer)
    return Buffer.from(body as Uint8Array).toString('utf8')
  throw new Error('unsupported request body type from openid-client')
}

export { oidc }
