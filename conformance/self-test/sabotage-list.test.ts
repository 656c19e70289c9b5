import { readFileSync } from 'node:fs'
import { expect, test } from 'vitest'
import { registeredChecks } from '../runner.ts'
import { partsOf, sabotage } from './sabotage.ts'

/**
 * The self-test's proofs, one line each (`ID: how it is broken`), as sabotages.txt lists them.
 * A proof is never dropped because it became harder to build (issue 34): one that disappears
 * from the code fails here; one that is added, or renamed, is written into the list as well.
 */
const inCode = registeredChecks().flatMap((id) =>
  partsOf(sabotage[id]).map((s) => `${id}: ${s.how}`),
)
const listed = readFileSync(new URL('./sabotages.txt', import.meta.url), 'utf8')
  .split('\n')
  .filter((line) => line.trim() !== '' && !line.startsWith('#'))

test('every sabotage in sabotages.txt still exists', () => {
  const present = new Set(inCode)
  expect(listed.filter((line) => !present.has(line))).toEqual([])
})

test('every sabotage is in sabotages.txt (the list is the same or longer)', () => {
  const written = new Set(listed)
  expect(inCode.filter((line) => !written.has(line))).toEqual([])
})
