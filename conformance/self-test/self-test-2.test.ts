import { proveSabotages } from './prove.ts'

// the other half of the sabotages (self-test.test.ts has the first), in a process of its own
proveSabotages(2, 2)
