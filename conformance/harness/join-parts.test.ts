import { describe, expect, it } from 'vitest'
import { type AreaChecks, check, joinParts } from './check.ts'

// a catalogue of three rows, as an area file's `typeof catalogue` types it
type Rows = { 'X-01': unknown; 'X-02': unknown; 'X-03': unknown }

const one = check(() => Promise.resolve())
const two = check(() => Promise.resolve())
const three = check(() => Promise.resolve())
const first = { 'X-01': one, 'X-02': two } satisfies Partial<AreaChecks<Rows>>
const second = { 'X-03': three } satisfies Partial<AreaChecks<Rows>>

describe('joinParts', () => {
  it('joins the parts of an area into its record, each check under its own ID', () => {
    const joined: AreaChecks<Rows> = joinParts(first, second)
    expect(joined).toEqual({ 'X-01': one, 'X-02': two, 'X-03': three })
  })

  it('does not compile when a row has no check in any part', () => {
    // @ts-expect-error X-03 is in no part
    const missing: AreaChecks<Rows> = joinParts(first)
    expect(Object.keys(missing)).toEqual(['X-01', 'X-02'])
  })

  it('does not compile when a row has a check in two parts', () => {
    const again = { 'X-02': three, 'X-03': three } satisfies Partial<AreaChecks<Rows>>
    // @ts-expect-error X-02 is in both parts: a spread would keep the second silently
    const twice: AreaChecks<Rows> = joinParts(first, again)
    expect(Object.keys(twice)).toEqual(['X-01', 'X-02', 'X-03'])
  })
})
