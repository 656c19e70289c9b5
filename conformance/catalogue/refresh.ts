import { area } from './requirement.ts'

/** RT-* rows of shared/REQUIREMENTS.md. */
export const refresh = area('Refresh', {
  'RT-01': {
    level: 'MUST',
    // offline_access granted → a refresh token is the MUST; one issued without it only warns
    source:
      'INTERFACE.md §2.1 (offline_access "enables refresh token issuance": granted, a refresh token, MUST); OIDC Core §11 ("The use of Refresh Tokens is not exclusive to the offline_access use case. The Authorization Server MAY grant Refresh Tokens in other contexts that are beyond the scope of this specification.": one issued for scope=openid is a SHOULD\'s warning)',
    title:
      'offline_access granted issues a refresh token (MUST); without it, none is issued (SHOULD)',
  },
  'RT-02': {
    level: 'MUST',
    source: 'OIDC Core §11; OIDF oidcc-refresh-token',
    title: 'offline_access with prompt=consent completes (consent shown or pre-consented)',
  },
  'RT-03': {
    level: 'MUST',
    source: 'INTERFACE.md §2.2, §4.2; RFC 6749 §5.1, §6; OIDC Core §12.2',
    title:
      'the refresh response has a new access token and no refresh token, and the refresh token works again',
  },
  'RT-04': {
    level: 'MUST',
    source: 'INTERFACE.md §4.2; RFC 6749 §6',
    title: 'a narrowed refresh scope is exactly the scope of the response and of the new token',
  },
  'RT-05': {
    level: 'MUST',
    source: 'RFC 6749 §6',
    title: 'after a narrowed refresh, a refresh without scope gets the whole original grant',
  },
  'RT-06': {
    level: 'MUST',
    source: 'INTERFACE.md §4.2, §7; RFC 6749 §5.2, §6',
    title: 'a refresh scope beyond the original grant is 400 invalid_scope',
  },
  'RT-07': {
    level: 'MUST',
    source: 'RFC 6749 §6, §10.4; OIDF oidcc-refresh-token',
    title: "another client presenting a client's refresh token gets 400 invalid_grant",
  },
  'RT-08': {
    level: 'MUST',
    source: 'INTERFACE.md §4.2; RFC 6749 §6',
    title: 'a refresh without the client secret, or with a wrong one, is 401 invalid_client',
  },
  'RT-09': {
    level: 'MUST',
    source:
      'INTERFACE.md §7; RFC 6749 §5.2; RFC 7009 §2.1; RFC 6749 §4.1.2 (a replay "SHOULD revoke (when possible)": CODE-03)',
    title:
      'garbage and revoked refresh tokens get 400 invalid_grant, a code replay’s revoked one too (whether a replay revokes is CODE-03’s SHOULD)',
  },
  'RT-10': {
    level: 'MUST',
    source: 'RFC 9700 §2.2.2, §4.14; OIDC Core §11 (INFO)',
    title:
      'refresh tokens that do not rotate are usable only by authenticated (confidential) clients',
  },
  'RT-11': {
    level: 'MUST',
    source: 'INTERFACE.md §7; RFC 6749 §5.2, §6',
    title: 'an expired refresh token gets 400 invalid_grant',
  },
})
