/**
 * The refusals a server may give a request before its application reads it, each right only for
 * a request that has what it names (RFC 9110 §15.5): ROBUST-01's malformed requests and
 * ROBUST-03's spoilt pages alike accept them only where they answer what was sent.
 */

/** What a request sent that a refusal before reading may answer. */
export interface Sent {
  readonly method: string
  /** The methods the endpoint serves. */
  readonly serves: readonly string[]
  /** Where the request was large, if it was: in its URI (the query) or in its body. */
  readonly large?: 'uri' | 'body' | undefined
  /** Its body is of a media type the endpoint does not take. */
  readonly unsupportedType?: boolean
}

/**
 * The statuses that answer `sent` before the application reads it:
 * - 405 for a method the endpoint does not serve (RFC 9110 §15.5.6: "the method received in the
 *   request-line is known by the origin server but not supported by the target resource");
 * - for a large request: 414 when it is large in the URI (RFC 9110 §15.5.15: "the target URI is
 *   longer than the server is willing to interpret") and 431 with it (RFC 6585 §5: "header
 *   fields are too large", which Node's parser counts the request line in), 413 when its body
 *   is (RFC 9110 §15.5.14: "the request content is larger than the server is willing or able to
 *   process");
 * - 415 for a body of a media type the endpoint does not take (RFC 9110 §15.5.16: "the content
 *   is in a format not supported by this method on the target resource").
 * None of them for a request that has none of these: a small request of a served method with
 * the endpoint's own media type is the application's to answer.
 */
export function refusableFor(sent: Sent): number[] {
  const statuses: number[] = []
  if (!sent.serves.includes(sent.method)) statuses.push(405)
  if (sent.large === 'body') statuses.push(413)
  if (sent.large === 'uri') statuses.push(414, 431)
  if (sent.unsupportedType === true) statuses.push(415)
  return statuses
}
