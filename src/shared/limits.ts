// Limits the contract states, defined once and read wherever they are enforced, documented or reported.

/** The whole alt-text request's deadline: image fetch, preparation, queue and model together. */
export const GENERATION_DEADLINE_MS = 15_000
export const GENERATION_DEADLINE_SECONDS = GENERATION_DEADLINE_MS / 1000
