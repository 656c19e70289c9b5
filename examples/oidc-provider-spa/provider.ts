import {
  startExampleProvider,
  type ExampleProvider,
  type ProviderFeatures,
} from '../oidc-provider/provider.ts'

/**
 * The second foreign profile: the same node-oidc-provider deployment as examples/oidc-provider
 * (its clients, users and endpoints), with what real deployments put in a client's way turned
 * on: a consent page, a login page that a script builds and that signs in with fetch, a
 * "continue" interstitial on every authorization while a session is alive, and rotated refresh
 * tokens whose reuse revokes the grant and ends the session (ProviderFeatures).
 */
export const SPA_FEATURES: Required<ProviderFeatures> = {
  consent: true,
  scriptLogin: true,
  interstitial: true,
  revokeOnReuse: true,
}

/** Starts the profile over HTTPS on 127.0.0.1; `features` overrides some of SPA_FEATURES. */
export function startSpaProvider(
  port = 0,
  features: ProviderFeatures = SPA_FEATURES,
): Promise<ExampleProvider> {
  return startExampleProvider(port, features)
}
