// The package's command line: the suite by default, and the subcommands serve, clients, users,
// keys and rp-test. scripts/idp-conformance.js (the bin) runs this file through tsx in a checkout and
// its compiled form (dist/) in an installed package.

import { pipeSafe } from './stdout.ts'

export const SUBCOMMANDS = `usage: idp-conformance [OPTIONS]                 run the conformance suite (options below)
       idp-conformance serve [OPTIONS]           run the reference server (serve --help)
       idp-conformance clients add [OPTIONS]     add a client to a clients file (clients --help)
       idp-conformance users add [OPTIONS]       add a user to a users file (users --help)
       idp-conformance keys list | rotate        list or rotate the signing keys (keys --help)
       idp-conformance rp-test --list | --run CMD test your relying party against the RP test
                                                 issuers (rp-test --help)
`

export async function run(args: readonly string[]): Promise<number | undefined> {
  // `idp-conformance --list | head`: the closed pipe ends the output, not the process
  const stdout = pipeSafe(process.stdout)
  const out = (line: string): void => void stdout.write(`${line}\n`)
  const err = (line: string): void => console.error(line)
  if (args[0] === 'serve') {
    await import('./serve.ts')
    return undefined
  }
  if (args[0] === 'keys') {
    const { keysMain } = await import('./keys.ts')
    return keysMain(args.slice(1), { out, err })
  }
  if (args[0] === 'rp-test') {
    const { rpTestMain } = await import('../conformance/rp-test/cli.ts')
    return rpTestMain(args.slice(1), { out: process.stdout, err: process.stderr, env: process.env })
  }
  if (args[0] === 'clients' || args[0] === 'users') {
    const { registrationsMain } = await import('./registrations.ts')
    return registrationsMain([...args], { out, err })
  }
  if (args.includes('--help') || args.includes('-h')) out(SUBCOMMANDS)
  const { main } = await import('../conformance/cli.ts')
  return main([...args], { out: stdout, err: process.stderr, env: process.env })
}
