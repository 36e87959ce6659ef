// Counts, balances and failures worded the same in every output of the service and its commands.

/** `1 image`, `2 images`; `many` for words that do not just take an s (`1 history entry`, `2 history entries`). */
export const plural = (count: number, one: string, many = `${one}s`): string => `${count} ${count === 1 ? one : many}`

/** Credits as the console shows them, "Credits left: 45 of 50": what is left, then the period's total. */
export const creditsLeft = (remaining: number, total: number): string => `${remaining} of ${total}`

/** What went wrong, in words: an Error's message, anything else thrown as a string. */
export const errorText = (error: unknown): string => (error instanceof Error ? error.message : String(error))
