import { area } from './requirement.ts'

/** ERR-* rows of shared/REQUIREMENTS.md. */
export const errors = area('Errors', {
  'ERR-01': {
    level: 'MUST',
    source: 'INTERFACE.md §7; RFC 9110 §15.5.5, §15.5.6',
    title:
      'unknown routes answer 404 and wrong methods 405 with Allow, both in the JSON error shape',
  },
  'ERR-02': {
    level: 'MUST',
    source: 'RFC 6749 §5.2, App. A.7, A.8',
    title: 'error and error_description use only the characters RFC 6749 allows',
  },
})
