/** A count with its noun in the right number: "1 check", "2 checks", "0 checks". */
export const plural = (n: number, one: string, many = `${one}s`): string =>
  `${n} ${n === 1 ? one : many}`
