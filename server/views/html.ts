/** HTML that is already safe to emit (the result of the `html` tag, or trusted markup). */
export class SafeHtml {
  readonly value: string
  constructor(value: string) {
    this.value = value
  }
  toString(): string {
    return this.value
  }
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
}

export const escapeHtml = (value: string): string =>
  value.replace(/[&<>"'`]/g, (c) => ESCAPES[c] ?? c)

type Interpolation = string | number | SafeHtml | readonly SafeHtml[] | undefined | null | false

/**
 * A tagged template that escapes every interpolated value unless it is SafeHtml
 * (RFC 6749 §10.14: reflected input is escaped).
 */
export function html(strings: TemplateStringsArray, ...values: Interpolation[]): SafeHtml {
  let out = strings[0] ?? ''
  values.forEach((v, i) => {
    if (v instanceof SafeHtml) out += v.value
    else if (Array.isArray(v)) out += (v as readonly SafeHtml[]).map((x) => x.value).join('')
    else if (v !== undefined && v !== null && v !== false) out += escapeHtml(String(v))
    out += strings[i + 1] ?? ''
  })
  return new SafeHtml(out)
}

/** Only https URLs may become links or images; anything else renders as nothing. */
export const safeUrl = (url: string | undefined): string | undefined => {
  if (!url) return undefined
  try {
    return new URL(url).protocol === 'https:' ? url : undefined
  } catch {
    return undefined
  }
}
