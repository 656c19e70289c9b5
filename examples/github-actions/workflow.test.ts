import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { EXIT } from '../../conformance/cli.ts'
import { chromiumExecutable } from '../../conformance/harness/browser.ts'
import { runCli } from '../../conformance/test-support.ts'

/**
 * The workflow file users copy as it is (issue 32): it parses as YAML, has the shape GitHub
 * Actions reads, and the commands it runs exist: the npm scripts it names are the package's,
 * and the suite's command line, run with its flags and the environment it sets, accepts them.
 *
 * The YAML parser is js-yaml, a devDependency of its own (not borrowed from ESLint's tree, which
 * could drop it in any release); it has no type declarations here, hence the typed require.
 */
const { load } = createRequire(import.meta.url)('js-yaml') as {
  load: (text: string) => unknown
}

const file = new URL('./conformance.yml', import.meta.url)
const root = new URL('../../', import.meta.url)

interface Step {
  readonly name?: string
  readonly uses?: string
  readonly run?: string
  readonly with?: Record<string, unknown>
  readonly env?: Record<string, string>
  readonly 'working-directory'?: string
  readonly if?: string
}
interface Workflow {
  readonly name: string
  readonly on: Record<string, unknown>
  readonly permissions?: Record<string, string>
  readonly jobs: Record<string, { 'runs-on': string; steps: Step[]; 'timeout-minutes'?: number }>
}

const workflow = load(readFileSync(file, 'utf8')) as Workflow
const steps = workflow.jobs.conformance?.steps ?? []
const scripts = (
  JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as {
    scripts: Record<string, string>
  }
).scripts

describe('examples/github-actions/conformance.yml', () => {
  test('parses, in the shape GitHub Actions reads', () => {
    expect(typeof workflow.name).toBe('string')
    expect(Object.keys(workflow.on)).toEqual(
      expect.arrayContaining(['workflow_dispatch', 'push', 'schedule']),
    )
    expect(workflow.permissions).toEqual({ contents: 'read' })
    const job = workflow.jobs.conformance
    expect(job?.['runs-on']).toBe('ubuntu-latest')
    expect(job?.['timeout-minutes']).toBeGreaterThan(0)
    expect(steps.length).toBeGreaterThan(0)
    for (const step of steps) {
      // a step either uses an action or runs a command, never both
      expect(Boolean(step.uses) !== Boolean(step.run), JSON.stringify(step)).toBe(true)
      if (step.uses) expect(step.uses).toMatch(/^[\w-]+\/[\w-]+@v\d+$/)
    }
    // the reports are uploaded whatever the run's outcome
    expect(steps.at(-1)).toMatchObject({ if: 'always()', uses: 'actions/upload-artifact@v4' })
  })

  test('the npm commands it runs are the package scripts', () => {
    const commands = steps.flatMap((s) => (s.run ?? '').split('\n')).filter((l) => /^npm /.test(l))
    expect(commands).toContain('npm ci')
    const named = commands.flatMap((l) => /^npm run ([\w:-]+)/.exec(l)?.[1] ?? [])
    expect(named).toContain('conformance')
    for (const script of named) expect(Object.keys(scripts)).toContain(script)
  })

  test("the suite's command line accepts its flags and the environment it sets", async () => {
    const run = steps.find((s) => s.run?.startsWith('npm run conformance --'))
    if (!run?.run) throw new Error('the workflow runs no `npm run conformance --`')
    // the environment the earlier step writes to GITHUB_ENV, and the step's own
    const written = steps.flatMap((s) =>
      [...(s.run ?? '').matchAll(/echo "(\w+)=[^"]*" >> "\$GITHUB_ENV"/g)].map((m) => m[1]),
    )
    expect(written).toEqual(['IDP_CONFIG', 'IDP_CA'])
    expect(Object.keys(run.env ?? {})).toEqual(['IDP_BASE_URL', 'CHROMIUM_PATH'])
    const help = await cli(['--help'], {})
    for (const name of [...written, 'IDP_BASE_URL']) expect(help.out).toContain(name)
    expect(chromiumExecutable({ CHROMIUM_PATH: run.env?.CHROMIUM_PATH })).toBe(
      run.env?.CHROMIUM_PATH,
    )

    // its arguments, with the files the workflow makes put in a scratch directory
    const dir = mkdtempSync(join(tmpdir(), 'workflow-'))
    const target = join(dir, 'target.json')
    writeFileSync(
      target,
      JSON.stringify({
        clients: { main: { id: 'app', secret: 's', redirectUri: 'https://app.example/cb' } },
        users: { primary: { username: 'u', password: 'p' } },
      }),
    )
    const knownFailures = join(dir, 'known-failures.json')
    writeFileSync(knownFailures, '[]')
    const args = run.run
      .replace(/^npm run conformance --/, '')
      .trim()
      .split(/\s+/)
      .map((word) =>
        word === '../ci/known-failures.json'
          ? knownFailures
          : word === '../reports'
            ? join(dir, 'reports')
            : word,
      )
    expect(args).toContain('--known-failures')
    expect(args).toContain('--report-dir')
    // --print-config parses every flag and reads the configuration, then stops: no target
    const printed = await cli([...args, '--print-config'], {
      IDP_BASE_URL: 'https://idp.example',
      IDP_CONFIG: target,
    })
    expect(printed.err).toBe('')
    expect(printed.code).toBe(EXIT.ok)
    expect(JSON.parse(printed.out)).toMatchObject({ baseUrl: 'https://idp.example' })
  })
})

const cli = (argv: string[], env: NodeJS.ProcessEnv) => runCli(argv, env)
