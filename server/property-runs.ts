/**
 * The run settings of the server's property-based tests (fast-check). PROPERTY_RUNS sets the
 * number of generated cases (npm run test:deep: 10,000), PROPERTY_SEED replays a run.
 */
export const RUNS = Math.max(1, Number(process.env.PROPERTY_RUNS) || 100)
export const SEED = Number.isInteger(Number(process.env.PROPERTY_SEED ?? 'x'))
  ? Number(process.env.PROPERTY_SEED)
  : Math.floor(Math.random() * 0x7fffffff)
export const params = { numRuns: RUNS, seed: SEED }
/**
 * The proofs that the properties can fail run from a fixed seed: same input, same verdict (issue
 * 19). Some weakenings are rare draws, and a varying seed sometimes drew none of them in 3000
 * runs, failing a healthy build; the properties themselves vary their seed (SEED). A sabotage
 * only needs one counterexample: no shrinking, a fixed ceiling.
 */
export const sabotageParams = { numRuns: 3000, seed: 20261124, endOnFailure: true }
