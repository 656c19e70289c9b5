import { describe, expect, test } from 'vitest'
import { runPool, Slots } from './pool.ts'

/** A task whose completion the test controls, recording what ran beside it. */
function harness(exclusive: ReadonlySet<string>) {
  const running = new Set<string>()
  const log: string[] = []
  let maxInFlight = 0
  const release = new Map<string, () => void>()
  const run = (item: string): Promise<string> =>
    new Promise<string>((resolve) => {
      if (exclusive.has(item) && running.size > 0)
        log.push(`${item} started beside ${[...running].join(',')}`)
      for (const other of running)
        if (exclusive.has(other)) log.push(`${item} started beside exclusive ${other}`)
      running.add(item)
      maxInFlight = Math.max(maxInFlight, running.size)
      release.set(item, () => {
        running.delete(item)
        resolve(`result of ${item}`)
      })
    })
  return { run, log, release, maxInFlight: () => maxInFlight, running }
}

/** Lets the pool start what it can, then finishes whatever runs, last started first. */
async function drain(h: ReturnType<typeof harness>, done: Promise<unknown>): Promise<void> {
  const state = { finished: false }
  void done.finally(() => (state.finished = true))
  while (!state.finished) {
    await new Promise((r) => setTimeout(r, 1))
    const last = [...h.running].pop()
    if (last) h.release.get(last)?.()
  }
}

describe('runPool', () => {
  test('keeps at most `concurrency` in flight and returns results in item order', async () => {
    const h = harness(new Set())
    const items = ['a', 'b', 'c', 'd', 'e', 'f', 'g']
    const finishedOrder: string[] = []
    const done = runPool(items, {
      concurrency: 3,
      alone: () => false,
      run: h.run,
      onDone: (_, item) => finishedOrder.push(item),
    })
    await drain(h, done)
    expect(await done).toEqual(items.map((i) => `result of ${i}`))
    expect(h.maxInFlight()).toBe(3)
    expect(finishedOrder).not.toEqual(items) // they finished out of order, results did not
    expect([...finishedOrder].sort()).toEqual(items)
  })

  test('an exclusive item runs with nothing beside it', async () => {
    const exclusive = new Set(['c', 'f'])
    const h = harness(exclusive)
    const items = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']
    const done = runPool(items, { concurrency: 4, alone: (i) => exclusive.has(i), run: h.run })
    await drain(h, done)
    expect(await done).toHaveLength(items.length)
    expect(h.log).toEqual([])
    expect(h.maxInFlight()).toBeGreaterThan(1)
  })

  test('concurrency 1 runs one at a time', async () => {
    const h = harness(new Set())
    const done = runPool(['a', 'b', 'c'], { concurrency: 1, alone: () => false, run: h.run })
    await drain(h, done)
    expect(h.maxInFlight()).toBe(1)
  })

  test('a failing task rejects the pool after the others settle', async () => {
    const settled: string[] = []
    const done = runPool(['a', 'b', 'c'], {
      concurrency: 3,
      alone: () => false,
      run: async (item) => {
        await new Promise((r) => setTimeout(r, item === 'b' ? 1 : 20))
        if (item === 'b') throw new Error('harness bug in b')
        settled.push(item)
        return item
      },
    })
    await expect(done).rejects.toThrow('harness bug in b')
    expect(settled.sort()).toEqual(['a', 'c'])
  })
})

describe('Slots', () => {
  test('grants at most size at once, in the order asked, and a waiter that leaves holds nothing', async () => {
    const slots = new Slots(2)
    const order: string[] = []
    const a = slots.acquire()
    const b = slots.acquire()
    const c = slots.acquire()
    const d = slots.acquire()
    for (const [name, s] of [
      ['a', a],
      ['b', b],
      ['c', c],
      ['d', d],
    ] as const)
      void s.ready.then(() => order.push(name))
    await Promise.resolve()
    expect(order).toEqual(['a', 'b'])
    c.release() // c gives up before it was granted
    a.release()
    await new Promise((r) => setTimeout(r, 0))
    expect(order).toEqual(['a', 'b', 'd'])
    b.release()
    d.release()
    d.release() // a second release changes nothing
    const e = slots.acquire()
    const f = slots.acquire()
    const g = slots.acquire()
    let gReady = false
    void g.ready.then(() => (gReady = true))
    await Promise.all([e.ready, f.ready])
    await new Promise((r) => setTimeout(r, 0))
    expect(gReady).toBe(false)
  })
})
