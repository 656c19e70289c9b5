import { execFileSync } from 'node:child_process'
import { scryptSync } from 'node:crypto'
import { loadavg } from 'node:os'
import { fileURLToPath } from 'node:url'
import { hashSync } from '@node-rs/argon2'
import {
  maxmemFor,
  OWASP_ARGON2ID,
  OWASP_SCRYPT,
  TEST_SCRYPT,
} from '../../server/users/passwords.ts'

// npm run bench -- --hash-cost: what one password hash costs, per algorithm, on this machine
// (README, Password hashing). Each hash kind is measured in a process of its own (its peak RSS
// is its own, not the previous one's), on that process's thread, as a hashing thread runs it:
// ROUNDS hashes one after another, the median time; the process's peak RSS over its RSS just
// before the first hash (modules loaded), which is the memory the hash took.

const ROUNDS = 5

type Kind = 'argon2id' | 'scrypt-2^17' | 'scrypt-2^14'

const KINDS: readonly { kind: Kind; label: string }[] = [
  { kind: 'argon2id', label: 'Argon2id m=19456 KiB, t=2, p=1 (default)' },
  { kind: 'scrypt-2^17', label: 'scrypt N=2^17, r=8, p=1 (OWASP scrypt minimum)' },
  { kind: 'scrypt-2^14', label: 'scrypt N=2^14, r=8, p=1 (the former tests’ cost)' },
]

/** The child's side: hash ROUNDS times, print the median ms and the peak RSS it added. */
function measure(kind: Kind): void {
  const salt = Buffer.alloc(16, 7)
  const once: Record<Kind, () => void> = {
    argon2id: () =>
      void hashSync('correct horse battery staple', {
        memoryCost: OWASP_ARGON2ID.memory,
        timeCost: OWASP_ARGON2ID.time,
        parallelism: OWASP_ARGON2ID.parallelism,
        outputLen: 32,
      }),
    'scrypt-2^17': () =>
      void scryptSync('correct horse battery staple', salt, 32, {
        ...OWASP_SCRYPT,
        maxmem: maxmemFor(OWASP_SCRYPT),
      }),
    'scrypt-2^14': () =>
      void scryptSync('correct horse battery staple', salt, 32, {
        ...TEST_SCRYPT,
        maxmem: maxmemFor(TEST_SCRYPT),
      }),
  }
  const before = process.memoryUsage().rss / 1024
  const times: number[] = []
  for (let i = 0; i < ROUNDS; i++) {
    const t0 = performance.now()
    once[kind]()
    times.push(performance.now() - t0)
  }
  times.sort((a, b) => a - b)
  const median = times[Math.floor(ROUNDS / 2)] ?? 0
  // maxRSS: KiB on Linux
  const added = process.resourceUsage().maxRSS - before
  process.stdout.write(`${JSON.stringify({ ms: median, rssKiB: added })}\n`)
}

function inChild(kind: Kind): { ms: number; rssKiB: number } {
  const out = execFileSync(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(import.meta.url), '--measure', kind],
    { encoding: 'utf8', timeout: 120_000 },
  )
  return JSON.parse(out.trim().split('\n').pop() ?? '{}') as { ms: number; rssKiB: number }
}

export function benchHashCost(): void {
  const load = loadavg()[0] ?? 0
  const rows = KINDS.map(({ kind, label }) => ({ label, ...inChild(kind) }))
  const argon2 = rows[0]
  console.log(`load average ${load.toFixed(2)}; median of ${ROUNDS}, one thread`)
  console.log('| hash | ms per hash | peak RSS the hash added |')
  console.log('| --- | --- | --- |')
  for (const r of rows)
    console.log(`| ${r.label} | ${r.ms.toFixed(0)} | ${(r.rssKiB / 1024).toFixed(0)} MiB |`)
  if (argon2)
    for (const r of rows.slice(1))
      console.log(
        `${r.label}: ${(r.ms / argon2.ms).toFixed(1)} × Argon2id's time, ${(r.rssKiB / Math.max(1, argon2.rssKiB)).toFixed(1)} × its memory`,
      )
}

if (process.argv[2] === '--measure') measure(process.argv[3] as Kind)
