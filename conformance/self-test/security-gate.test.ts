import { expect, test } from 'vitest'
import { gate, type GateOptions } from '../gate.ts'
import { requirements } from '../requirements.ts'
import { gatedShoulds } from '../threats.ts'
import { judge } from './judge.ts'
import { sabotageTarget } from './prove.ts'
import { partsOf, sabotage } from './sabotage.ts'

// The security gate at work on a real run (issue 30): a SHOULD behind a token theft warns, which
// a default run ships and a security-profile run (`--only security`, cli.ts) does not. UI-12
// against a reference server whose user-info reads ?access_token= (built from outside its code).
const withSabotage = sabotageTarget()

test('UI-12 against a user-info that takes the token from the query warns, failing a security-profile run only', async () => {
  const [broken] = partsOf(sabotage['UI-12'])
  if (!broken) throw new Error('UI-12 has no sabotage')
  const result = await withSabotage('UI-12', broken)
  // the warning is UI-12's own assertion, as the self-test's proof asks
  expect(judge(result, 'SHOULD', broken.expect), result.message).toEqual([])
  const options: GateOptions = {
    strict: false,
    allowSkips: false,
    knownFailures: [],
    today: new Date(),
  }
  expect(gate([result], options).passed, 'a default run only warns').toBe(true)
  const security = gate([result], {
    ...options,
    raised: gatedShoulds((id) => requirements[id].level),
  })
  expect(security.passed, 'a security-profile run fails').toBe(false)
  expect(security.problems.join('\n')).toMatch(
    /^UI-12 \[SHOULD\] warn, held at MUST by the security profile for token theft \(RFC 6819 §4\.6\.7 Token leakage via log files and HTTP referrers\): GET user-info with the access token in the URI query/,
  )
})
