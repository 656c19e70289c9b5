import { readFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import Joi from 'joi'
import type { TargetConfig } from './harness/target.ts'
import { UsageError } from './usage-error.ts'

const client = Joi.object({
  id: Joi.string().required(),
  secret: Joi.string().required(),
  redirectUri: Joi.string()
    .uri({ scheme: ['https', 'http'] })
    .optional(),
  postLogoutRedirectUri: Joi.string()
    .uri({ scheme: ['https', 'http'] })
    .optional(),
  scope: Joi.string().min(1).optional(),
  // one scope name (RFC 6749 §3.3 scope-token: no space)
  foreignScope: Joi.string()
    .pattern(/^[\x21\x23-\x5B\x5D-\x7E]+$/)
    .optional(),
})
const user = Joi.object({
  username: Joi.string().required(),
  password: Joi.string().required(),
  // the names an account chooser may show the user by (browser.ts accountControl)
  email: Joi.string(),
  name: Joi.string(),
})

const selector = Joi.string().min(1)
// the iframe a step acts in: its selector, or the selectors of the frames around it, outermost first
const framePath = Joi.alternatives().try(selector, Joi.array().items(selector).min(1))
const interactionStep = Joi.alternatives().try(
  Joi.object({ goto: Joi.string().min(1).required(), optional: Joi.boolean() }),
  Joi.object({
    fill: selector.required(),
    value: Joi.string().required(),
    optional: Joi.boolean(),
    frame: framePath,
  }),
  Joi.object({ click: selector.required(), optional: Joi.boolean(), frame: framePath }),
  Joi.object({
    press: selector.required(),
    key: Joi.string().min(1).required(),
    optional: Joi.boolean(),
    frame: framePath,
  }),
  Joi.object({ waitFor: selector.required(), optional: Joi.boolean(), frame: framePath }),
)
/** A regular expression that compiles (the URL pattern of an interaction). */
const pattern = Joi.string()
  .min(1)
  .custom((value: string) => {
    new RegExp(value)
    return value
  }, 'a regular expression')
  .messages({ 'any.custom': '{{#label}} is not a regular expression: {{#error.message}}' })
const interaction = Joi.object({
  name: Joi.string().min(1).required(),
  kind: Joi.string().valid('login', 'consent', 'continue', 'account', 'logout', 'other'),
  url: pattern,
  detect: selector,
  steps: Joi.array()
    .items(
      interactionStep.messages({
        'alternatives.match':
          '{{#label}} must be one step: goto; fill with value; click; press with key; or waitFor (each may be optional; all but goto may name a frame)',
      }),
    )
    .min(1)
    .required(),
  stepTimeoutMs: Joi.number().integer().min(100).max(120_000),
  optionalWaitMs: Joi.number().integer().min(0).max(60_000),
})
  .or('url', 'detect')
  .messages({ 'object.missing': '{{#label}} needs url or detect (how the page is recognised)' })
// the login page's steps are those of an interaction (README: any step may be optional)
const login = Joi.object({
  detect: selector,
  steps: Joi.array()
    .items(
      interactionStep.messages({
        'alternatives.match':
          '{{#label}} must be one step: goto; fill with value; click; press with key; or waitFor (each may be optional; all but goto may name a frame)',
      }),
    )
    .min(1),
  cancel: selector,
  stepTimeoutMs: Joi.number().integer().min(100).max(120_000),
  optionalWaitMs: Joi.number().integer().min(0).max(60_000),
})

const fileSchema = Joi.object({
  baseUrl: Joi.string()
    .uri({ scheme: ['https'] })
    .optional(),
  ca: Joi.string().optional(),
  clients: Joi.object({
    main: client.required(),
    other: client,
    third: client,
    service: client,
    codeOnly: client,
  }).optional(),
  users: Joi.object({ primary: user.required(), secondary: user }).optional(),
  plainHttpUrl: Joi.string()
    .uri({ scheme: ['http'] })
    .optional(),
  rateLimitBudget: Joi.number().strict().integer().min(1).optional(),
  refreshTokenLifetime: Joi.number().strict().integer().min(1).optional(),
  accessTokenLifetime: Joi.number().strict().integer().min(1).optional(),
  // strict: Joi would take "20" for 20 and leave the string in the file's value
  sessionLifetime: Joi.number().strict().integer().min(1).optional(),
  // origins only (scheme, host, port): a path would suggest a narrower rule than the one applied
  idpOrigins: Joi.array()
    .items(
      Joi.string()
        .uri({ scheme: ['https'] })
        .pattern(/^https:\/\/[^/?#]+\/?$/)
        .message('{{#label}} must be an https origin (scheme, host and port only)'),
    )
    .optional(),
  login: login.optional(),
  interactions: Joi.array().items(interaction).optional(),
})

export interface TargetFlags {
  readonly baseUrl?: string | undefined
  readonly config?: string | undefined
  readonly ca?: string | undefined
}

/**
 * The target of a run against a deployment: flags win over the environment
 * (`IDP_BASE_URL`, `IDP_CA`), which wins over the config file. The CA is read as PEM.
 */
export function loadTargetConfig(
  flags: TargetFlags,
  env: NodeJS.ProcessEnv = process.env,
): TargetConfig {
  let file: Record<string, unknown> = {}
  let fileDir = process.cwd()
  const configPath = flags.config ?? env.IDP_CONFIG
  if (configPath) {
    let text: string
    try {
      text = readFileSync(configPath, 'utf8')
    } catch (err) {
      throw new UsageError(
        `cannot read config file ${configPath}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      )
    }
    try {
      file = JSON.parse(text) as Record<string, unknown>
    } catch (err) {
      throw new UsageError(`config file ${configPath} is not JSON: ${(err as Error).message}`)
    }
    const { error } = fileSchema.validate(file, { abortEarly: false })
    if (error)
      throw new UsageError(
        `config file ${configPath}: ${error.details.map((d) => d.message).join('; ')}`,
      )
    fileDir = dirname(resolve(configPath))
  }
  const baseUrl = flags.baseUrl ?? env.IDP_BASE_URL ?? (file.baseUrl as string | undefined)
  if (!baseUrl)
    throw new UsageError(
      'no target: give --base-url URL (or run without arguments for the embedded server)',
    )
  let parsed: URL
  try {
    parsed = new URL(baseUrl)
  } catch {
    throw new UsageError(`--base-url ${baseUrl} is not a URL`)
  }
  if (parsed.protocol !== 'https:')
    throw new UsageError(`--base-url must be https (INTERFACE.md §1), got ${baseUrl}`)
  const caPath =
    flags.ca ?? env.IDP_CA ?? (file.ca ? resolve(fileDir, file.ca as string) : undefined)
  let ca: string | undefined
  if (caPath) {
    try {
      ca = readFileSync(caPath, 'utf8')
    } catch (err) {
      throw new UsageError(
        `cannot read CA file ${caPath}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      )
    }
    if (!ca.includes('-----BEGIN CERTIFICATE-----'))
      throw new UsageError(`CA file ${caPath} holds no PEM certificate`)
  }
  const clients = file.clients as TargetConfig['clients'] | undefined
  const users = file.users as TargetConfig['users'] | undefined
  if (!clients)
    throw new UsageError('the config file must name at least clients.main (id and secret)')
  if (!users)
    throw new UsageError('the config file must name at least users.primary (username and password)')
  return {
    baseUrl,
    ca,
    clients,
    users,
    plainHttpUrl: file.plainHttpUrl as string | undefined,
    rateLimitBudget: file.rateLimitBudget as number | undefined,
    refreshTokenLifetime: file.refreshTokenLifetime as number | undefined,
    accessTokenLifetime: file.accessTokenLifetime as number | undefined,
    sessionLifetime: file.sessionLifetime as number | undefined,
    idpOrigins: file.idpOrigins as string[] | undefined,
    login: file.login as TargetConfig['login'],
    interactions: file.interactions as TargetConfig['interactions'],
  }
}
