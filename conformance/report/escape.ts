/** Text made safe inside HTML elements and quoted attributes. */
export const escapeHtml = (s: string): string =>
  s.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`)

/** Text made safe in XML 1.0 (JUnit): escaped, and the control characters it forbids dropped. */
export const escapeXml = (s: string): string =>
  // eslint-disable-next-line no-control-regex -- XML 1.0 forbids these control characters
  escapeHtml(s.replace(/[\x00-\x08\x0B\x0C\x0E-\x1F]/g, ''))

/** Text made safe in one cell of a Markdown table (no pipe, no line break). */
export const markdownCell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ')
