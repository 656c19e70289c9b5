import { randomBytes } from 'node:crypto'
import type { Request } from '@hapi/hapi'
import { sha256Hex } from '../../server/protocol/digest.ts'
import { s256, VERIFIER, verifierMatches } from '../../server/protocol/pkce.ts'
import { formatScope, parseScope } from '../../server/protocol/scope.ts'
import type { StoredCode, Store } from '../../server/store/store.ts'
import {
  extendAll,
  onRequestOf,
  onResponseOf,
  rewriteLocation,
  type Extend,
  type Route,
} from './broken-server.ts'

/**
 * Broken reference servers about authorization codes, PKCE and the token endpoint (issue 34),
 * built from outside the server's code: the codes the server writes into its redirects are
 * shown as others and taken back on their way into /auth/token, the token request is changed
 * before its handler runs, and the store given to the server misbehaves.
 */

/** A server broken both ways at once: its store wrapped, and hapi extensions added. */
export interface BrokenServer {
  readonly store: (store: Store) => Store
  readonly extend: Extend
}

const TOKEN_POST: Route = { path: '/auth/token', method: 'post' }

/** The routes whose success redirects carry a new code: the sign-in, and authorize with a session. */
const ISSUING: readonly Route[] = [
  { path: '/auth/login', method: 'post' },
  { path: '/auth/authorize' },
]

/** The parsed form of a token request (hapi's payload object), or undefined. */
const formOf = (request: Request): Record<string, unknown> | undefined =>
  typeof request.payload === 'object' && !Buffer.isBuffer(request.payload)
    ? (request.payload as Record<string, unknown>)
    : undefined

/** The code of an authorization_code token request, or undefined. */
function codeRedeemed(form: Record<string, unknown> | undefined): string | undefined {
  if (form?.grant_type !== 'authorization_code') return undefined
  return typeof form.code === 'string' ? form.code : undefined
}

/**
 * The codes the server stored, by digest, as a store wrapper records them: what a sabotage
 * reads of a code it sees in a redirect or a token request (its challenge, its sign-in).
 */
function codeLedger() {
  const stored = new Map<string, StoredCode>()
  return {
    store: (store: Store): Store => ({
      ...store,
      codes: {
        ...store.codes,
        async insert(code) {
          await store.codes.insert(code)
          stored.set(code.digest, code)
        },
      },
    }),
    /** The record of a code the server issued (its plain value, as a client holds it). */
    of: (code: string): StoredCode | undefined => stored.get(sha256Hex(code)),
  }
}

/**
 * Shows every code the server issues as `show` makes it from the real one, in the success
 * redirect's Location, and takes a shown code back to the real one on its way into the token
 * endpoint: a server whose codes look like `show`'s and still redeem.
 */
export function showCodesAs(show: (code: string) => string): Extend {
  const real = new Map<string, string>()
  const rewrite = (to: URL): URL => {
    const code = to.searchParams.get('code')
    if (code === null) return to
    const shown = show(code)
    // a shown code that repeats stands for the first real code it was shown for
    if (!real.has(shown)) real.set(shown, code)
    // only the code's pair changes: the rest of the query stays as the server encoded it
    to.search = to.search
      .slice(1)
      .split('&')
      .map((pair) => (pair.startsWith('code=') ? `code=${encodeURIComponent(shown)}` : pair))
      .join('&')
    return to
  }
  return extendAll(
    ...ISSUING.map((route) => rewriteLocation(route, rewrite)),
    onRequestOf(TOKEN_POST, (request) => {
      const form = formOf(request)
      const code = codeRedeemed(form)
      const original = code === undefined ? undefined : real.get(code)
      if (form && original !== undefined) form.code = original
    }),
  )
}

/** CODE-10's and SEC-06's weak codes: 32 random bits behind a fixed prefix, long enough to look fine. */
export const weakCode = (): string => `code-${randomBytes(4).toString('hex')}-000000000000`

/** CODE-10's short codes: 88 random bits in 15 characters. */
export const shortCode = (): string => randomBytes(11).toString('base64url')

/**
 * CODE-10's repeating codes: every authorization of one sign-in (client, user and the time
 * of the sign-in) is shown the code of its first; redeeming that redeems the first one.
 */
export function codesRepeatPerSignIn(): BrokenServer {
  const ledger = codeLedger()
  const first = new Map<string, string>()
  return {
    store: ledger.store,
    extend: showCodesAs((code) => {
      const record = ledger.of(code)
      if (!record) return code
      const signIn = `${record.clientId}\n${record.userId}\n${String(record.authTime)}`
      if (!first.has(signIn)) first.set(signIn, code)
      return first.get(signIn) ?? code
    }),
  }
}

// ---------------------------------------------------------------------------------------------
// Spending codes: store wrappers

/** CODE-07's sabotage: the store hands out codes as if they never expired. */
export const codesNeverExpire = (store: Store): Store => ({
  ...store,
  codes: {
    ...store.codes,
    async consume(digest, now, binding) {
      const consumed = await store.codes.consume(digest, now, binding)
      return consumed && { ...consumed, code: { ...consumed.code, expiresAt: Infinity } }
    },
  },
})

/**
 * CODE-11's sabotage: a code is spent by whoever presents it, before its client and
 * redirect_uri are compared (the store ignores the binding it is given).
 */
export const codesSpentByAnyRequest = (store: Store): Store => ({
  ...store,
  codes: { ...store.codes, consume: (digest, now) => store.codes.consume(digest, now) },
})

/**
 * PKCE-08's sabotage: a code counts as spent only once it has issued tokens, so a redemption
 * that failed (on PKCE, say) leaves it redeemable.
 */
export function failedRedemptionsKeepCodes(): (store: Store) => Store {
  /** Codes that have issued tokens. */
  const issuedFrom = new Set<string>()
  return (store) => ({
    ...store,
    codes: {
      ...store.codes,
      async consume(digest, now, binding) {
        const consumed = await store.codes.consume(digest, now, binding)
        if (!consumed || consumed.unbound || issuedFrom.has(digest)) return consumed
        return { ...consumed, firstUse: true }
      },
    },
    tokens: {
      ...store.tokens,
      async insert(token) {
        if (token.codeDigest !== null) issuedFrom.add(token.codeDigest)
        await store.tokens.insert(token)
      },
    },
  })
}

// ---------------------------------------------------------------------------------------------
// PKCE at the token endpoint

/** The verifier put in place of a waived one (43 unreserved characters). */
const STAND_IN = randomBytes(32).toString('base64url')

/**
 * A token endpoint that redeems a code without its PKCE proof when `waived` says so (given the
 * request's code_verifier and the challenge stored with the code): the request is sent on with
 * a verifier of the saboteur's, and the store hands that code out with the matching challenge.
 */
function pkceWaivedWhen(
  waived: (verifier: string | undefined, challenge: string) => boolean,
): BrokenServer {
  const ledger = codeLedger()
  /** Digests of the codes whose next redemption is waived. */
  const pending = new Set<string>()
  return {
    store: (store) => {
      const recorded = ledger.store(store)
      return {
        ...recorded,
        codes: {
          ...recorded.codes,
          async consume(digest, now, binding) {
            const consumed = await recorded.codes.consume(digest, now, binding)
            if (!consumed || !pending.delete(digest)) return consumed
            return { ...consumed, code: { ...consumed.code, codeChallenge: s256(STAND_IN) } }
          },
        },
      }
    },
    extend: onRequestOf(TOKEN_POST, (request) => {
      const form = formOf(request)
      const code = codeRedeemed(form)
      const record = code === undefined ? undefined : ledger.of(code)
      if (!form || !record) return
      const verifier = typeof form.code_verifier === 'string' ? form.code_verifier : undefined
      if (!waived(verifier, record.codeChallenge)) return
      form.code_verifier = STAND_IN
      pending.add(record.digest)
    }),
  }
}

/** PKCE-05's downgrade: a token request without code_verifier skips PKCE. */
export const pkceVerifierOptional = (): BrokenServer =>
  pkceWaivedWhen((verifier) => verifier === undefined || verifier === '')

/** PKCE-06's plain fallback: the stored challenge itself is accepted as the verifier. */
export const pkcePlainFallback = (): BrokenServer =>
  pkceWaivedWhen((verifier, challenge) => verifier === challenge)

/**
 * PKCE-07's unchecked syntax: a verifier outside RFC 7636 §4.1's 43-128 unreserved characters
 * is compared with the challenge like any other (instead of refused), and redeems when it matches.
 */
export const pkceVerifierSyntaxUnchecked = (): BrokenServer =>
  pkceWaivedWhen(
    (verifier, challenge) =>
      verifier !== undefined && !VERIFIER.test(verifier) && verifierMatches(verifier, challenge),
  )

// ---------------------------------------------------------------------------------------------
// The token endpoint

/** The grant types the reference server supports (INTERFACE.md §1). */
const GRANTS = ['authorization_code', 'refresh_token', 'client_credentials']

/**
 * TOK-06's sabotage: every client is handed out as registered for every grant type, so the
 * token endpoint's check of the registered grant types lets every request through.
 */
export const clientsOfEveryGrant = (store: Store): Store => ({
  ...store,
  clients: {
    ...store.clients,
    async get(id) {
      const client = await store.clients.get(id)
      return client && { ...client, grantTypes: GRANTS }
    },
  },
})

/**
 * AUTHZ-11's sabotage: the authorization_code grant's response reports only the scopes the
 * client is registered for, while the access token carries every scope of the code.
 */
export const tokenResponseScopeAsRegistered: Extend = (app) =>
  onResponseOf(TOKEN_POST, async (response, request) => {
    const form = formOf(request)
    const body = response.source as Record<string, unknown> | null
    if (codeRedeemed(form) === undefined || typeof body?.scope !== 'string') return
    const client = await app.deps.store.clients.get(String(form?.client_id))
    if (!client) return
    const granted = parseScope(body.scope) ?? []
    body.scope = formatScope(granted.filter((s) => client.scopes.includes(s)))
  })(app)
