import type { Deps } from '../deps.ts'
import type { Client } from '../store/store.ts'

/** The JSON body of a successful token response (INTERFACE.md §2.2). */
export interface TokenResponse {
  readonly access_token: string
  readonly token_type: 'Bearer'
  readonly expires_in: number
  readonly refresh_token?: string
  readonly id_token?: string
  readonly scope: string
}

/** One grant type of the token endpoint: one file, one value. */
export interface Grant {
  readonly type: string
  handle(
    input: { client: Client; params: Readonly<Record<string, string>> },
    deps: Deps,
  ): Promise<TokenResponse>
}
