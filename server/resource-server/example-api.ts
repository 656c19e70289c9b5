import Hapi from '@hapi/hapi'
import { requireOwnerOrAdmin, requireTenant, tenantFilter } from './authorization.ts'
import { claimsOf, idpBearer } from './hapi-plugin.ts'
import type { AccessTokenClaims, Verifier } from './verifier.ts'

/** A document of the example API: owned by a user, inside an organisation. */
export interface Document {
  readonly id: string
  readonly orgId: string
  readonly owner: string
  readonly title: string
}

/** Seed data: alice (org-1) and bob (org-2) each own a document; org-1 has a second one. */
export const SEED_DOCUMENTS: readonly Document[] = [
  { id: 'doc-1', orgId: 'org-1', owner: 'usr_8f14e45fceea167a', title: 'Alice’s notes' },
  { id: 'doc-2', orgId: 'org-1', owner: 'usr_other_in_org_1', title: 'Org-1 handbook' },
  { id: 'doc-3', orgId: 'org-2', owner: 'usr_c9f0f895fb98ab91', title: 'Bob’s plans' },
]

const claims = (request: Hapi.Request): AccessTokenClaims => {
  const c = claimsOf(request)
  if (!c) throw new Error('route without authentication')
  return c
}

const notFound = (h: Hapi.ResponseToolkit) =>
  h
    .response({ error: 'not_found', error_description: 'no such document' })
    .code(404)
    .type('application/json')

/**
 * A small resource server that uses every check of INTERFACE.md §5.7 through the idp-bearer
 * scheme: scope (read:documents, write:documents), role (admin), ownership (owner or admin)
 * and tenant (org_id). For tests and as an integrator's example; plain HTTP on loopback is
 * acceptable only because it runs inside tests.
 */
export async function createExampleApi(options: {
  verifier: Verifier
  host?: string
  port?: number
  tls?: { cert: string; key: string }
}) {
  const server = Hapi.server({
    host: options.host ?? '127.0.0.1',
    port: options.port ?? 0,
    ...(options.tls ? { tls: options.tls } : {}),
  })
  await server.register({
    plugin: idpBearer,
    options: { verifier: options.verifier, realm: 'documents' },
  })
  server.auth.default('idp-bearer')
  const documents = new Map(SEED_DOCUMENTS.map((d) => [d.id, { ...d }]))
  server.route([
    {
      method: 'GET',
      path: '/documents',
      options: { plugins: { idp: { scope: 'read:documents' } } },
      handler: (request) => ({ documents: tenantFilter(claims(request), [...documents.values()]) }),
    },
    {
      method: 'GET',
      path: '/documents/{id}',
      options: { plugins: { idp: { scope: 'read:documents' } } },
      handler: (request, h) => {
        const doc = documents.get(request.params.id as string)
        if (!doc) return notFound(h)
        requireTenant(claims(request), doc.orgId)
        return doc
      },
    },
    {
      method: 'DELETE',
      path: '/documents/{id}',
      options: { plugins: { idp: { scope: 'write:documents' } } },
      handler: (request, h) => {
        const doc = documents.get(request.params.id as string)
        if (!doc) return notFound(h)
        const c = claims(request)
        requireTenant(c, doc.orgId)
        requireOwnerOrAdmin(c, doc.owner)
        documents.delete(doc.id)
        return h.response().code(204)
      },
    },
    {
      method: 'GET',
      path: '/admin/users',
      options: { plugins: { idp: { role: 'admin' } } },
      handler: (request) => ({ org_id: claims(request).org_id, users: [] }),
    },
  ])
  return server
}
