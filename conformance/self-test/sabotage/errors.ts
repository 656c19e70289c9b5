import { http, HttpResponse } from 'msw'
import type { errors } from '../../catalogue/errors.ts'
import {
  corruptHeaders,
  corruptJson,
  DISCOVERY,
  ERROR_PROBES,
  JWKS,
  perPart,
  type Sabotages,
  type Target,
} from './kit.ts'

/** How to break the target for each ERR-* check. */
export const errorsSabotage: Record<keyof typeof errors, Sabotages> = {
  // one sabotage per probe (each a sub-case), and one for the Allow header of a 405
  'ERR-01': perPart([
    {
      how: '405 without Allow',
      expect: /405 without an Allow header listing GET/,
      handlers: corruptHeaders(JWKS, (h) => h.delete('allow'), 'all'),
    },
    ...ERROR_PROBES.map(({ method: name, path, status }) => ({
      how: `${name} ${path} is answered with an HTML page`,
      expect: new RegExp(
        `^${name} ${path.replace(/[.]/g, '\\.')}: error body: expected Content-Type application/json`,
      ),
      handlers: (target: Target) => [
        http[name === 'GET' ? 'get' : name === 'POST' ? 'post' : 'delete'](
          target.baseUrl + path,
          () =>
            HttpResponse.html('<h1>Not here</h1>', {
              status,
              ...(status === 405 ? { headers: { allow: 'GET' } } : {}),
            }),
        ),
      ],
    })),
    ...ERROR_PROBES.map(({ method: name, path, status }) => ({
      how: `${name} ${path} is answered 500 in the JSON shape`,
      expect: new RegExp(
        `^${name} ${path.replace(/[.]/g, '\\.')}: status: expected HTTP ${status === 405 ? '404 or 405' : String(status)}, got 500`,
      ),
      handlers: (target: Target) => [
        http[name === 'GET' ? 'get' : name === 'POST' ? 'post' : 'delete'](
          target.baseUrl + path,
          () =>
            HttpResponse.json(
              { error: 'server_error', error_description: 'unexpected' },
              { status: 500 },
            ),
        ),
      ],
    })),
    {
      how: 'the 404 of an unknown endpoint has no error_description',
      expect:
        /^GET \/auth\/no-such-endpoint: error body: expected an error_description string, got undefined/,
      handlers: corruptJson('/auth/no-such-endpoint', (b) => {
        delete b.error_description
      }),
    },
  ]),
  // one sabotage per member of the error body, on different probes (each a sub-case)
  'ERR-02': [
    {
      how: 'an error_description with a double quote',
      expect:
        /^GET \/auth\/no-such-endpoint: error_description .* has characters outside RFC 6749 App\. A\.8/,
      handlers: corruptJson(
        '/auth/no-such-endpoint',
        (b) => (b.error_description = 'no "such" endpoint'),
      ),
    },
    {
      how: 'an error code with a backslash',
      expect:
        /^DELETE \/\.well-known\/openid-configuration: error .* has characters outside RFC 6749 App\. A\.7/,
      handlers: corruptJson(
        DISCOVERY,
        (b) => {
          if (typeof b.error === 'string') b.error = 'method\\not_allowed'
        },
        'all',
      ),
    },
  ],
}
