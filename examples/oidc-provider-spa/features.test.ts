import { createHash, randomBytes } from 'node:crypto'
import { CookieJar } from 'tough-cookie'
import { Agent, fetch } from 'undici'
import { afterEach, describe, expect, test } from 'vitest'
import { CLIENT, USERS, type ProviderFeatures } from '../oidc-provider/provider.ts'
import { startSpaProvider } from './provider.ts'

/**
 * Each foreign feature of the example, on its own, behaves as provider.ts documents it, driven
 * over HTTP as a browser would (the cookies of one user agent, every redirect followed): what
 * the suite is run against in oidc-provider-spa.test.ts and order.test.ts is what it claims.
 */
type Step = { callback: string } | { url: string; status: number; text: string }

async function agentFor(features: ProviderFeatures) {
  const provider = await startSpaProvider(0, features)
  const base = provider.baseUrl
  const dispatcher = new Agent({ connect: { ca: provider.ca } })
  const jar = new CookieJar()
  const send = async (
    url: string,
    init: { method?: string; body?: string; type?: string } = {},
  ) => {
    const cookie = await jar.getCookieString(url)
    const res = await fetch(url, {
      method: init.method ?? 'GET',
      redirect: 'manual',
      dispatcher,
      headers: {
        origin: base,
        ...(cookie ? { cookie } : {}),
        ...(init.type ? { 'content-type': init.type } : {}),
      },
      ...(init.body === undefined ? {} : { body: init.body }),
    })
    for (const c of res.headers.getSetCookie()) await jar.setCookie(c, url)
    return res
  }
  const follow = async (
    first: string,
    init: { method?: string; body?: string; type?: string } = {},
  ): Promise<Step> => {
    let url = first
    let res = await send(url, init)
    for (let hops = 0; hops < 10; hops++) {
      const location = res.headers.get('location')
      if (!location) break
      const next = new URL(location, url).toString()
      if (next.startsWith(CLIENT.redirectUri)) return { callback: next }
      url = next
      res = await send(url)
    }
    return { url, status: res.status, text: await res.text() }
  }
  const authorize = async (scope = 'openid', extra: Record<string, string> = {}) => {
    const verifier = randomBytes(32).toString('base64url')
    const u = new URL(`${base}/auth/authorize`)
    const params = {
      client_id: CLIENT.id,
      redirect_uri: CLIENT.redirectUri,
      response_type: 'code',
      scope,
      state: 'state-1',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
      ...extra,
    }
    for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v)
    return { verifier, step: await follow(u.toString()) }
  }
  const token = async (form: Record<string, string>) => {
    const res = await fetch(`${base}/auth/token`, {
      method: 'POST',
      dispatcher,
      body: new URLSearchParams({ client_id: CLIENT.id, client_secret: CLIENT.secret, ...form }),
    })
    return { status: res.status, body: (await res.json()) as Record<string, unknown> }
  }
  const redeem = (code: string, verifier: string) =>
    token({
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: CLIENT.redirectUri,
    })
  const stop = async () => {
    await dispatcher.close()
    await provider.stop()
  }
  return { base, follow, authorize, token, redeem, stop }
}

const page = (step: Step) => {
  if ('callback' in step) throw new Error(`expected a page, got the callback ${step.callback}`)
  return step
}
const callback = (step: Step) => {
  if (!('callback' in step)) throw new Error(`expected the callback, got ${step.url}`)
  return new URL(step.callback)
}
const interaction = (step: Step) => new URL(page(step).url).pathname
const formLogin = (a: Awaited<ReturnType<typeof agentFor>>, step: Step) =>
  a.follow(`${a.base}${interaction(step)}/login`, {
    method: 'POST',
    type: 'application/x-www-form-urlencoded',
    body: new URLSearchParams({ ...USERS.primary }).toString(),
  })

describe('examples/oidc-provider-spa: each foreign feature on its own', () => {
  let stop: (() => Promise<void>) | undefined
  afterEach(async () => {
    await stop?.()
    stop = undefined
  })

  test('scriptLogin: no form in the HTML; a JSON post signs in and answers where to go', async () => {
    const a = await agentFor({ scriptLogin: true })
    stop = a.stop
    const { step } = await a.authorize()
    const html = page(step).text
    expect(html).not.toMatch(/<input\b[^>]*type="password"/i)
    expect(html).toMatch(/<script src="\/interaction-assets\/login\.js"/)
    const login = `${a.base}${interaction(step)}/login-json`
    const json = (body: unknown) => ({
      method: 'POST',
      type: 'application/json',
      body: JSON.stringify(body),
    })
    const wrong = page(await a.follow(login, json({ username: 'alice', password: 'nope' })))
    expect(wrong.status).toBe(401)
    expect(page(await a.follow(login, { ...json({}), body: '{not json' })).status).toBe(400)
    const right = page(await a.follow(login, json(USERS.primary)))
    expect(right.status).toBe(200)
    const { location } = JSON.parse(right.text) as { location: string }
    expect(callback(await a.follow(location)).searchParams.get('code')).toBeTruthy()
  })

  test('consent: a page to Allow, then no page for the same scope in the session', async () => {
    const a = await agentFor({ consent: true })
    stop = a.stop
    const first = await formLogin(a, (await a.authorize('openid email')).step)
    expect(page(first).text).toMatch(/<h1>Allow conformance-client/)
    expect(page(first).text).toMatch(/<li>email<\/li>/)
    const allowed = await a.follow(`${a.base}${interaction(first)}/confirm`, { method: 'POST' })
    expect(callback(allowed).searchParams.get('code')).toBeTruthy()
    expect(callback((await a.authorize('openid email')).step).searchParams.get('code')).toBeTruthy()
    // prompt=consent asks again
    const again = await a.authorize('openid email', { prompt: 'consent' })
    expect(page(again.step).text).toMatch(/<h1>Allow conformance-client/)
  })

  test('interstitial: "continue" on every authorization of a live session, never with prompt=none', async () => {
    const a = await agentFor({ interstitial: true })
    stop = a.stop
    // the sign-in itself goes straight to the client
    expect(callback(await formLogin(a, (await a.authorize()).step))).toBeTruthy()
    for (let i = 0; i < 2; i++) {
      const { step } = await a.authorize()
      expect(page(step).text).toMatch(/You are signed in as <strong>Alice Liddell<\/strong>/)
      const on = await a.follow(`${a.base}${interaction(step)}/continue`, { method: 'POST' })
      expect(callback(on).searchParams.get('code')).toBeTruthy()
    }
    const silent = await a.authorize('openid', { prompt: 'none' })
    expect(callback(silent.step).searchParams.get('code')).toBeTruthy()
  })

  test('revokeOnReuse: refresh tokens rotate; a rotated one presented again ends the grant and the session', async () => {
    const a = await agentFor({ revokeOnReuse: true })
    stop = a.stop
    const signedIn = await a.authorize('openid offline_access', { prompt: 'consent' })
    const code = callback(await formLogin(a, signedIn.step)).searchParams.get('code') ?? ''
    const tokens = await a.redeem(code, signedIn.verifier)
    expect(tokens.status).toBe(200)
    const first = String(tokens.body.refresh_token)
    const refreshed = await a.token({ grant_type: 'refresh_token', refresh_token: first })
    expect(refreshed.status).toBe(200)
    const second = String(refreshed.body.refresh_token)
    expect(second).not.toBe(first)
    // the session still signs the user in without a form
    expect(callback((await a.authorize()).step)).toBeTruthy()
    const reuse = await a.token({ grant_type: 'refresh_token', refresh_token: first })
    expect({ status: reuse.status, error: reuse.body.error }).toEqual({
      status: 400,
      error: 'invalid_grant',
    })
    // the grant is revoked: the refresh token that replaced it is refused too
    const after = await a.token({ grant_type: 'refresh_token', refresh_token: second })
    expect(after.body.error).toBe('invalid_grant')
    // and the session is over: the login form again
    expect(page((await a.authorize()).step).text).toMatch(/type="password"/)
  })

  test('all off: the plain example (no rotation, no pages between a live session and the client)', async () => {
    const a = await agentFor({})
    stop = a.stop
    const signedIn = await a.authorize('openid offline_access', { prompt: 'consent' })
    const code = callback(await formLogin(a, signedIn.step)).searchParams.get('code') ?? ''
    const rt = String((await a.redeem(code, signedIn.verifier)).body.refresh_token)
    const refreshed = await a.token({ grant_type: 'refresh_token', refresh_token: rt })
    expect(refreshed.body.refresh_token).toBe(rt)
    expect(callback((await a.authorize()).step)).toBeTruthy()
  })
})
