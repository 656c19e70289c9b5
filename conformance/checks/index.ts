// Importing this module registers every check (one file per area).
import './discovery.ts'
import './jwks.ts'
import './transport.ts'
import './errors.ts'
